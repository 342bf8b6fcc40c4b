-- CreateTable
CREATE TABLE "Automation" (
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
    "cursorTxid" BIGINT NOT NULL DEFAULT 0,
    "cursorId" INTEGER NOT NULL DEFAULT 0,
    "nextRunAt" DATETIME,
    "claimedBy" TEXT,
    "claimedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "AutomationRun" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "automationId" INTEGER NOT NULL,
    "eventId" INTEGER,
    "eventType" TEXT,
    "scheduledFor" DATETIME,
    "depth" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL,
    "conditionValue" BOOLEAN,
    "outcomes" JSONB,
    "error" TEXT,
    "durationMs" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "AutomationRun_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AutomationEffect" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "accountId" INTEGER NOT NULL,
    "runId" INTEGER NOT NULL,
    "result" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ChangeEvent" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "recordId" INTEGER NOT NULL,
    "data" JSONB NOT NULL,
    "changes" JSONB,
    "requestId" TEXT,
    "traceId" TEXT,
    "notify" BOOLEAN NOT NULL DEFAULT true,
    "actor" JSONB,
    "txid" BIGINT NOT NULL DEFAULT 0,
    "automationRunId" INTEGER,
    "depth" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_ChangeEvent" ("accountId", "actor", "changes", "createdAt", "data", "id", "notify", "recordId", "requestId", "resource", "traceId", "txid", "type") SELECT "accountId", "actor", "changes", "createdAt", "data", "id", "notify", "recordId", "requestId", "resource", "traceId", "txid", "type" FROM "ChangeEvent";
DROP TABLE "ChangeEvent";
ALTER TABLE "new_ChangeEvent" RENAME TO "ChangeEvent";
CREATE INDEX "ChangeEvent_accountId_txid_id_idx" ON "ChangeEvent"("accountId", "txid", "id");
CREATE INDEX "ChangeEvent_createdAt_idx" ON "ChangeEvent"("createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "Automation_accountId_idx" ON "Automation"("accountId");

-- CreateIndex
CREATE INDEX "AutomationRun_accountId_id_idx" ON "AutomationRun"("accountId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "AutomationRun_automationId_eventId_key" ON "AutomationRun"("automationId", "eventId");

-- CreateIndex
CREATE UNIQUE INDEX "AutomationRun_automationId_scheduledFor_key" ON "AutomationRun"("automationId", "scheduledFor");

-- CreateIndex
CREATE INDEX "AutomationEffect_runId_idx" ON "AutomationEffect"("runId");

