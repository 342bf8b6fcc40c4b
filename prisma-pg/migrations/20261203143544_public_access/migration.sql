-- AlterTable
ALTER TABLE "Account" ADD COLUMN     "slug" TEXT;

-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "allowedOrigins" TEXT,
ADD COLUMN     "publishable" BOOLEAN NOT NULL DEFAULT false;

-- Every account gets a slug: its name in lower case where that is URL-safe and no other account's name folds to it,
-- else `account-<id>`. Changeable later (accounts:slug).
UPDATE "Account" SET "slug" = CASE WHEN "name" <> '' AND "name" !~ '[^A-Za-z0-9-]' AND lower("name") !~ '^account-[0-9]'
  AND (SELECT count(*) FROM "Account" AS b WHERE lower(b."name") = lower("Account"."name")) = 1
  THEN lower("name") ELSE 'account-' || "id" END;

-- CreateIndex
CREATE UNIQUE INDEX "Account_slug_key" ON "Account"("slug");

