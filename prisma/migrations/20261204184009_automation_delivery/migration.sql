-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Automation" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "triggers" JSONB NOT NULL,
    "schedule" TEXT,
    "condition" TEXT,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "actions" JSONB NOT NULL,
    "ownerKeyId" INTEGER,
    "ownerUserId" INTEGER,
    "ownerScopes" JSONB NOT NULL,
    "secret" TEXT NOT NULL DEFAULT '',
    "cursorTxid" BIGINT NOT NULL DEFAULT 0,
    "cursorId" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME,
    "nextRunAt" DATETIME,
    "claimedBy" TEXT,
    "claimedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Automation" ("accountId", "actions", "claimedBy", "claimedUntil", "condition", "createdAt", "cursorId", "cursorTxid", "description", "enabled", "id", "name", "nextRunAt", "ownerKeyId", "ownerScopes", "ownerUserId", "priority", "schedule", "triggers", "updatedAt") SELECT "accountId", "actions", "claimedBy", "claimedUntil", "condition", "createdAt", "cursorId", "cursorTxid", "description", "enabled", "id", "name", "nextRunAt", "ownerKeyId", "ownerScopes", "ownerUserId", "priority", "schedule", "triggers", "updatedAt" FROM "Automation";
DROP TABLE "Automation";
ALTER TABLE "new_Automation" RENAME TO "Automation";
CREATE INDEX "Automation_accountId_idx" ON "Automation"("accountId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

