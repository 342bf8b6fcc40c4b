-- AlterTable
ALTER TABLE "ChangeEvent" ADD COLUMN     "automationRunId" INTEGER,
ADD COLUMN     "depth" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "Automation" (
    "id" SERIAL NOT NULL,
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
    "nextRunAt" TIMESTAMP(3),
    "claimedBy" TEXT,
    "claimedUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Automation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AutomationRun" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "automationId" INTEGER NOT NULL,
    "eventId" INTEGER,
    "eventType" TEXT,
    "scheduledFor" TIMESTAMP(3),
    "depth" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL,
    "conditionValue" BOOLEAN,
    "outcomes" JSONB,
    "error" TEXT,
    "durationMs" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AutomationRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AutomationEffect" (
    "key" TEXT NOT NULL,
    "accountId" INTEGER NOT NULL,
    "runId" INTEGER NOT NULL,
    "result" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AutomationEffect_pkey" PRIMARY KEY ("key")
);

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

-- AddForeignKey
ALTER TABLE "AutomationRun" ADD CONSTRAINT "AutomationRun_automationId_fkey" FOREIGN KEY ("automationId") REFERENCES "Automation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

