-- AlterTable
ALTER TABLE "ChangeEvent" ADD COLUMN     "actor" JSONB;

-- CreateTable
CREATE TABLE "Password" (
    "userId" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Password_pkey" PRIMARY KEY ("userId")
);

-- CreateTable
CREATE TABLE "SignInLink" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "purpose" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SignInLink_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OAuthClient" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "secretHash" TEXT,
    "public" BOOLEAN NOT NULL DEFAULT false,
    "redirectUris" JSONB NOT NULL,
    "postLogoutRedirectUris" JSONB NOT NULL,
    "allowedOrigins" JSONB NOT NULL,
    "scopes" JSONB NOT NULL,
    "disabledAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "OAuthClient_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OidcRecord" (
    "key" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "grantId" TEXT,
    "userCode" TEXT,
    "uid" TEXT,
    "expiresAt" TIMESTAMP(3),
    "consumedAt" TIMESTAMP(3),

    CONSTRAINT "OidcRecord_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "SigningKey" (
    "id" SERIAL NOT NULL,
    "kid" TEXT NOT NULL,
    "jwk" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMP(3),

    CONSTRAINT "SigningKey_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "Password" ADD CONSTRAINT "Password_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SignInLink" ADD CONSTRAINT "SignInLink_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

