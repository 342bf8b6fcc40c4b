-- AlterTable
ALTER TABLE "Account" ADD COLUMN "ssoSecret" TEXT;

