-- AlterTable
ALTER TABLE "Automation" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "nextAttemptAt" TIMESTAMP(3),
ADD COLUMN     "secret" TEXT NOT NULL DEFAULT '';

