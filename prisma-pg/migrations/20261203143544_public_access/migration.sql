-- AlterTable
ALTER TABLE "Account" ADD COLUMN     "slug" TEXT;

-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "allowedOrigins" TEXT,
ADD COLUMN     "publishable" BOOLEAN NOT NULL DEFAULT false;

-- Every account gets a slug: its name in lower case with spaces as hyphens where that is URL-safe and no other
-- account's name folds to it, else `account-<id>`. Changeable later (accounts:slug).
UPDATE "Account" SET "slug" = CASE WHEN lower(replace(trim("Account"."name"), ' ', '-')) ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$' AND lower(replace(trim("Account"."name"), ' ', '-')) !~ '^account-[0-9]'
  AND (SELECT count(*) FROM "Account" AS b WHERE lower(replace(trim(b."name"), ' ', '-')) = lower(replace(trim("Account"."name"), ' ', '-'))) = 1
  THEN lower(replace(trim("Account"."name"), ' ', '-')) ELSE 'account-' || "id" END;

-- CreateIndex
CREATE UNIQUE INDEX "Account_slug_key" ON "Account"("slug");

