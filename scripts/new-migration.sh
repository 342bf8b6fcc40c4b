#!/usr/bin/env bash
# Writes a new migration from the difference between the last migration's schema snapshot and prisma/schema.prisma.
# Usage: npm run db:migration -- <name>
set -euo pipefail
name=${1:?give the migration a name}
export CHECKPOINT_DISABLE=1
last=$(ls -d prisma/migrations/*/ | sort | tail -n 1)
dir="prisma/migrations/$(date -u +%Y%m%d%H%M%S)_${name}"
mkdir -p "$dir"
npx prisma migrate diff --from-schema-datamodel "${last}schema.snapshot.prisma" --to-schema-datamodel prisma/schema.prisma --script > "$dir/migration.sql"
cp prisma/schema.prisma "$dir/schema.snapshot.prisma"
echo "Wrote $dir/migration.sql"
