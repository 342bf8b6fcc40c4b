#!/usr/bin/env bash
# Writes a new migration, for SQLite and for PostgreSQL, from the difference between the last migration's schema
# snapshot and the current models (prisma/schema.prisma, and prisma-pg/schema.prisma derived from it).
# The PostgreSQL half needs a reachable PostgreSQL server (Prisma's JS schema engine connects even to diff two
# schema files): MUSTER_MIGRATION_PG_URL, default postgresql://postgres@127.0.0.1:5432/postgres. Nothing is changed there.
# Usage: npm run db:migration -- <name>
set -euo pipefail
name=${1:?give the migration a name}
export CHECKPOINT_DISABLE=1
stamp="$(date -u +%Y%m%d%H%M%S)_${name}"

last=$(ls -d prisma/migrations/*/ | sort | tail -n 1)
dir="prisma/migrations/$stamp"
mkdir -p "$dir"
# The engine opens the adapter's database even to diff two files: a scratch one, so no ./data/ is needed.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
DATABASE_URL="file:$scratch/diff.db" \
  npx prisma migrate diff --from-schema-datamodel "${last}schema.snapshot.prisma" --to-schema-datamodel prisma/schema.prisma --script > "$dir/migration.sql"
cp prisma/schema.prisma "$dir/schema.snapshot.prisma"
echo "Wrote $dir/migration.sql"

node scripts/gen-pg-schema.mjs
pglast=$(ls -d prisma-pg/migrations/*/ | sort | tail -n 1)
pgdir="prisma-pg/migrations/$stamp"
mkdir -p "$pgdir"
DATABASE_URL="${MUSTER_MIGRATION_PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}" \
  npx prisma migrate diff --config prisma.pg.config.ts --from-schema-datamodel "${pglast}schema.snapshot.prisma" \
  --to-schema-datamodel prisma-pg/schema.prisma --script > "$pgdir/migration.sql"
cp prisma-pg/schema.prisma "$pgdir/schema.snapshot.prisma"
echo "Wrote $pgdir/migration.sql"
