-- AlterTable: the lists were JSON text; they become jsonb in place.
ALTER TABLE "ApiKey" ALTER COLUMN "scopes" TYPE JSONB USING "scopes"::jsonb,
ALTER COLUMN "allowedOrigins" TYPE JSONB USING "allowedOrigins"::jsonb;
