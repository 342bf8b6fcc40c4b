-- AlterTable
ALTER TABLE "ChangeEvent" ADD COLUMN "actor" JSONB;

-- CreateTable
CREATE TABLE "Password" (
    "userId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "hash" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Password_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SignInLink" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "purpose" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SignInLink_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "OAuthClient" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "secretHash" TEXT,
    "public" BOOLEAN NOT NULL DEFAULT false,
    "redirectUris" JSONB NOT NULL,
    "postLogoutRedirectUris" JSONB NOT NULL,
    "allowedOrigins" JSONB NOT NULL,
    "scopes" JSONB NOT NULL,
    "disabledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "OidcRecord" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "model" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "grantId" TEXT,
    "userCode" TEXT,
    "uid" TEXT,
    "expiresAt" DATETIME,
    "consumedAt" DATETIME
);

-- CreateTable
CREATE TABLE "SigningKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "kid" TEXT NOT NULL,
    "jwk" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" DATETIME
);

-- CreateIndex
CREATE UNIQUE INDEX "SignInLink_hash_key" ON "SignInLink"("hash");

-- CreateIndex
CREATE INDEX "SignInLink_userId_idx" ON "SignInLink"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "OAuthClient_clientId_key" ON "OAuthClient"("clientId");

-- CreateIndex
CREATE INDEX "OAuthClient_accountId_id_idx" ON "OAuthClient"("accountId", "id");

-- CreateIndex
CREATE INDEX "OidcRecord_grantId_idx" ON "OidcRecord"("grantId");

-- CreateIndex
CREATE INDEX "OidcRecord_uid_idx" ON "OidcRecord"("uid");

-- CreateIndex
CREATE INDEX "OidcRecord_userCode_idx" ON "OidcRecord"("userCode");

-- CreateIndex
CREATE INDEX "OidcRecord_expiresAt_idx" ON "OidcRecord"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "SigningKey_kid_key" ON "SigningKey"("kid");

