-- AlterTable
ALTER TABLE "Account" ADD COLUMN "slug" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ApiKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "name" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "publishable" BOOLEAN NOT NULL DEFAULT false,
    "allowedOrigins" TEXT,
    "expiresAt" DATETIME,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "ApiKey_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_ApiKey" ("accountId", "createdAt", "expiresAt", "hash", "id", "lastUsedAt", "name", "prefix", "revokedAt", "scopes", "updatedAt", "userId") SELECT "accountId", "createdAt", "expiresAt", "hash", "id", "lastUsedAt", "name", "prefix", "revokedAt", "scopes", "updatedAt", "userId" FROM "ApiKey";
DROP TABLE "ApiKey";
ALTER TABLE "new_ApiKey" RENAME TO "ApiKey";
CREATE UNIQUE INDEX "ApiKey_hash_key" ON "ApiKey"("hash");
CREATE INDEX "ApiKey_accountId_idx" ON "ApiKey"("accountId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- Every account gets a slug: its name in lower case with spaces as hyphens where that is URL-safe and no other
-- account's name folds to it, else `account-<id>`. Changeable later (accounts:slug).
UPDATE "Account" SET "slug" = CASE WHEN length(lower(replace(trim("Account"."name"), ' ', '-'))) BETWEEN 1 AND 63 AND lower(replace(trim("Account"."name"), ' ', '-')) NOT GLOB '*[^a-z0-9-]*' AND lower(replace(trim("Account"."name"), ' ', '-')) NOT GLOB '-*' AND lower(replace(trim("Account"."name"), ' ', '-')) NOT GLOB '*-' AND lower(replace(trim("Account"."name"), ' ', '-')) NOT GLOB 'account-[0-9]*'
  AND (SELECT count(*) FROM "Account" AS b WHERE lower(replace(trim(b."name"), ' ', '-')) = lower(replace(trim("Account"."name"), ' ', '-'))) = 1
  THEN lower(replace(trim("Account"."name"), ' ', '-')) ELSE 'account-' || "id" END;

-- CreateIndex
CREATE UNIQUE INDEX "Account_slug_key" ON "Account"("slug");

