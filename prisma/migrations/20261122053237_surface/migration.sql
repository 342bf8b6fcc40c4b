-- DropIndex
DROP INDEX "CategoryForm_categoryId_formId_key";

-- DropIndex
DROP INDEX "CategoryQualification_categoryId_qualificationId_key";

-- DropIndex
DROP INDEX "CategoryRank_categoryId_rankId_key";

-- DropIndex
DROP INDEX "CategoryAward_categoryId_awardId_key";

-- DropIndex
DROP INDEX "CategoryDocument_categoryId_documentId_key";

-- DropIndex
DROP INDEX "FieldLink_formId_fieldId_key";

-- DropIndex
DROP INDEX "FieldLink_userId_fieldId_key";

-- DropIndex
DROP INDEX "TaskAssignment_userId_taskId_key";

-- DropIndex
DROP INDEX "NewsfeedLike_newsfeedItemId_userId_key";

-- AlterTable
ALTER TABLE "User" ADD COLUMN "coverPhoto" TEXT;
ALTER TABLE "User" ADD COLUMN "facebookUserId" TEXT;
ALTER TABLE "User" ADD COLUMN "githubUserId" TEXT;
ALTER TABLE "User" ADD COLUMN "googleUserId" TEXT;
ALTER TABLE "User" ADD COLUMN "profilePhoto" TEXT;

-- CreateTable
CREATE TABLE "AwardRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "awardId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "AwardRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "AwardRecord_awardId_fkey" FOREIGN KEY ("awardId") REFERENCES "Award" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AwardRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AwardRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CombatRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "CombatRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "CombatRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "CombatRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "QualificationRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "qualificationId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "QualificationRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "QualificationRecord_qualificationId_fkey" FOREIGN KEY ("qualificationId") REFERENCES "Qualification" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "QualificationRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "QualificationRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "ServiceRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "ServiceRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "ServiceRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "ServiceRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "TrainingRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "instructorId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "TrainingRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "TrainingRecord_instructorId_fkey" FOREIGN KEY ("instructorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "TrainingRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "TrainingRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Announcement" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "color" TEXT NOT NULL,
    "global" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "expiresAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Calendar" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "color" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "CalendarTag" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "calendarId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "CalendarTag_calendarId_fkey" FOREIGN KEY ("calendarId") REFERENCES "Calendar" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "CalendarTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Event" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "calendarId" INTEGER NOT NULL,
    "description" TEXT,
    "content" TEXT,
    "location" TEXT,
    "url" TEXT,
    "authorId" INTEGER,
    "allDay" BOOLEAN NOT NULL DEFAULT false,
    "starts" DATETIME NOT NULL,
    "ends" DATETIME NOT NULL,
    "repeats" BOOLEAN NOT NULL DEFAULT false,
    "registrationEnabled" BOOLEAN NOT NULL DEFAULT true,
    "registrationDeadline" DATETIME,
    "notificationsEnabled" BOOLEAN NOT NULL DEFAULT true,
    "notificationsInterval" JSONB,
    "notificationsChannels" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Event_calendarId_fkey" FOREIGN KEY ("calendarId") REFERENCES "Calendar" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Event_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EventTag" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "eventId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "EventTag_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "Event" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "EventTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "DocumentTag" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "documentId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "DocumentTag_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "DocumentTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Group" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "order" INTEGER NOT NULL DEFAULT 0,
    "hidden" BOOLEAN NOT NULL DEFAULT false,
    "icon" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "GroupUnit" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "groupId" INTEGER NOT NULL,
    "unitId" INTEGER NOT NULL,
    "order" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "GroupUnit_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "Group" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GroupUnit_unitId_fkey" FOREIGN KEY ("unitId") REFERENCES "Unit" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Message" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "message" TEXT NOT NULL,
    "channels" JSONB,
    "recipients" JSONB,
    "repeats" BOOLEAN NOT NULL DEFAULT false,
    "sendAt" DATETIME,
    "sentAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Setting" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "group" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "payload" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Schedule" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "modelType" TEXT,
    "modelId" INTEGER,
    "start" DATETIME,
    "duration" INTEGER,
    "endType" TEXT,
    "count" INTEGER,
    "until" DATETIME,
    "frequency" TEXT,
    "interval" INTEGER,
    "byDay" JSONB,
    "byMonth" JSONB,
    "bySetPosition" JSONB,
    "byMonthDay" JSONB,
    "byYearDay" JSONB,
    "rrule" TEXT,
    "lastOccurrence" DATETIME,
    "nextOccurrence" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_RankRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "rankId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "type" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "RankRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "RankRecord_rankId_fkey" FOREIGN KEY ("rankId") REFERENCES "Rank" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "RankRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "RankRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_RankRecord" ("accountId", "authorId", "createdAt", "documentId", "id", "rankId", "text", "type", "updatedAt", "userId") SELECT "accountId", "authorId", "createdAt", "documentId", "id", "rankId", "text", "type", "updatedAt", "userId" FROM "RankRecord";
DROP TABLE "RankRecord";
ALTER TABLE "new_RankRecord" RENAME TO "RankRecord";
CREATE INDEX "RankRecord_accountId_createdAt_idx" ON "RankRecord"("accountId", "createdAt");
CREATE INDEX "RankRecord_userId_createdAt_idx" ON "RankRecord"("userId", "createdAt");
CREATE TABLE "new_AssignmentRecord" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "statusId" INTEGER,
    "unitId" INTEGER,
    "positionId" INTEGER,
    "specialtyId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "type" TEXT NOT NULL DEFAULT 'primary',
    "text" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "AssignmentRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_statusId_fkey" FOREIGN KEY ("statusId") REFERENCES "Status" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_unitId_fkey" FOREIGN KEY ("unitId") REFERENCES "Unit" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_positionId_fkey" FOREIGN KEY ("positionId") REFERENCES "Position" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_specialtyId_fkey" FOREIGN KEY ("specialtyId") REFERENCES "Specialty" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "AssignmentRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_AssignmentRecord" ("accountId", "authorId", "createdAt", "documentId", "id", "positionId", "specialtyId", "statusId", "text", "type", "unitId", "updatedAt", "userId") SELECT "accountId", "authorId", "createdAt", "documentId", "id", "positionId", "specialtyId", "statusId", "text", "type", "unitId", "updatedAt", "userId" FROM "AssignmentRecord";
DROP TABLE "AssignmentRecord";
ALTER TABLE "new_AssignmentRecord" RENAME TO "AssignmentRecord";
CREATE INDEX "AssignmentRecord_accountId_createdAt_idx" ON "AssignmentRecord"("accountId", "createdAt");
CREATE INDEX "AssignmentRecord_userId_createdAt_idx" ON "AssignmentRecord"("userId", "createdAt");
CREATE INDEX "AssignmentRecord_specialtyId_idx" ON "AssignmentRecord"("specialtyId");
CREATE TABLE "new_Submission" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "accountId" INTEGER NOT NULL,
    "formId" INTEGER,
    "userId" INTEGER,
    "data" JSONB,
    "readAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Submission_formId_fkey" FOREIGN KEY ("formId") REFERENCES "Form" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Submission_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Submission" ("accountId", "createdAt", "data", "formId", "id", "readAt", "updatedAt", "userId") SELECT "accountId", "createdAt", "data", "formId", "id", "readAt", "updatedAt", "userId" FROM "Submission";
DROP TABLE "Submission";
ALTER TABLE "new_Submission" RENAME TO "Submission";
CREATE INDEX "Submission_accountId_id_idx" ON "Submission"("accountId", "id");
CREATE INDEX "Submission_formId_idx" ON "Submission"("formId");
CREATE INDEX "Submission_userId_idx" ON "Submission"("userId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "AwardRecord_accountId_createdAt_idx" ON "AwardRecord"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "AwardRecord_userId_createdAt_idx" ON "AwardRecord"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "AwardRecord_awardId_idx" ON "AwardRecord"("awardId");

-- CreateIndex
CREATE INDEX "CombatRecord_accountId_createdAt_idx" ON "CombatRecord"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "CombatRecord_userId_createdAt_idx" ON "CombatRecord"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "QualificationRecord_accountId_createdAt_idx" ON "QualificationRecord"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "QualificationRecord_userId_createdAt_idx" ON "QualificationRecord"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "QualificationRecord_qualificationId_idx" ON "QualificationRecord"("qualificationId");

-- CreateIndex
CREATE INDEX "ServiceRecord_accountId_createdAt_idx" ON "ServiceRecord"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "ServiceRecord_userId_createdAt_idx" ON "ServiceRecord"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "TrainingRecord_accountId_createdAt_idx" ON "TrainingRecord"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "TrainingRecord_userId_createdAt_idx" ON "TrainingRecord"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "TrainingRecord_instructorId_idx" ON "TrainingRecord"("instructorId");

-- CreateIndex
CREATE INDEX "Announcement_accountId_enabled_idx" ON "Announcement"("accountId", "enabled");

-- CreateIndex
CREATE INDEX "Calendar_accountId_id_idx" ON "Calendar"("accountId", "id");

-- CreateIndex
CREATE INDEX "CalendarTag_tagId_idx" ON "CalendarTag"("tagId");

-- CreateIndex
CREATE UNIQUE INDEX "CalendarTag_calendarId_tagId_key" ON "CalendarTag"("calendarId", "tagId");

-- CreateIndex
CREATE INDEX "Event_accountId_starts_idx" ON "Event"("accountId", "starts");

-- CreateIndex
CREATE INDEX "Event_calendarId_starts_idx" ON "Event"("calendarId", "starts");

-- CreateIndex
CREATE INDEX "EventTag_tagId_idx" ON "EventTag"("tagId");

-- CreateIndex
CREATE UNIQUE INDEX "EventTag_eventId_tagId_key" ON "EventTag"("eventId", "tagId");

-- CreateIndex
CREATE INDEX "DocumentTag_tagId_idx" ON "DocumentTag"("tagId");

-- CreateIndex
CREATE UNIQUE INDEX "DocumentTag_documentId_tagId_key" ON "DocumentTag"("documentId", "tagId");

-- CreateIndex
CREATE INDEX "Group_accountId_order_idx" ON "Group"("accountId", "order");

-- CreateIndex
CREATE INDEX "GroupUnit_groupId_unitId_idx" ON "GroupUnit"("groupId", "unitId");

-- CreateIndex
CREATE INDEX "GroupUnit_unitId_idx" ON "GroupUnit"("unitId");

-- CreateIndex
CREATE INDEX "Message_accountId_id_idx" ON "Message"("accountId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Setting_accountId_group_name_key" ON "Setting"("accountId", "group", "name");

-- CreateIndex
CREATE INDEX "Schedule_accountId_id_idx" ON "Schedule"("accountId", "id");

-- CreateIndex
CREATE INDEX "Schedule_modelType_modelId_idx" ON "Schedule"("modelType", "modelId");

-- CreateIndex
CREATE INDEX "CategoryForm_categoryId_formId_idx" ON "CategoryForm"("categoryId", "formId");

-- CreateIndex
CREATE INDEX "CategoryQualification_categoryId_qualificationId_idx" ON "CategoryQualification"("categoryId", "qualificationId");

-- CreateIndex
CREATE INDEX "CategoryRank_categoryId_rankId_idx" ON "CategoryRank"("categoryId", "rankId");

-- CreateIndex
CREATE INDEX "CategoryAward_categoryId_awardId_idx" ON "CategoryAward"("categoryId", "awardId");

-- CreateIndex
CREATE INDEX "CategoryDocument_categoryId_documentId_idx" ON "CategoryDocument"("categoryId", "documentId");

-- CreateIndex
CREATE INDEX "FieldLink_formId_fieldId_idx" ON "FieldLink"("formId", "fieldId");

-- CreateIndex
CREATE INDEX "FieldLink_userId_fieldId_idx" ON "FieldLink"("userId", "fieldId");

-- CreateIndex
CREATE INDEX "TaskAssignment_userId_taskId_idx" ON "TaskAssignment"("userId", "taskId");

-- CreateIndex
CREATE INDEX "NewsfeedLike_newsfeedItemId_userId_idx" ON "NewsfeedLike"("newsfeedItemId", "userId");

