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
ALTER TABLE "User" ADD COLUMN     "coverPhoto" TEXT,
ADD COLUMN     "facebookUserId" TEXT,
ADD COLUMN     "githubUserId" TEXT,
ADD COLUMN     "googleUserId" TEXT,
ADD COLUMN     "profilePhoto" TEXT;

-- AlterTable
ALTER TABLE "RankRecord" ALTER COLUMN "userId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "AssignmentRecord" ALTER COLUMN "userId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "Submission" ALTER COLUMN "formId" DROP NOT NULL;

-- CreateTable
CREATE TABLE "AwardRecord" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "awardId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AwardRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CombatRecord" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CombatRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "QualificationRecord" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "qualificationId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "QualificationRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ServiceRecord" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ServiceRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TrainingRecord" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "userId" INTEGER,
    "instructorId" INTEGER,
    "documentId" INTEGER,
    "authorId" INTEGER,
    "text" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "TrainingRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Announcement" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "color" TEXT NOT NULL,
    "global" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Announcement_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Calendar" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "color" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Calendar_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CalendarTag" (
    "id" SERIAL NOT NULL,
    "calendarId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CalendarTag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Event" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "calendarId" INTEGER NOT NULL,
    "description" TEXT,
    "content" TEXT,
    "location" TEXT,
    "url" TEXT,
    "authorId" INTEGER,
    "allDay" BOOLEAN NOT NULL DEFAULT false,
    "starts" TIMESTAMP(3) NOT NULL,
    "ends" TIMESTAMP(3) NOT NULL,
    "repeats" BOOLEAN NOT NULL DEFAULT false,
    "registrationEnabled" BOOLEAN NOT NULL DEFAULT true,
    "registrationDeadline" TIMESTAMP(3),
    "notificationsEnabled" BOOLEAN NOT NULL DEFAULT true,
    "notificationsInterval" JSONB,
    "notificationsChannels" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EventTag" (
    "id" SERIAL NOT NULL,
    "eventId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EventTag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DocumentTag" (
    "id" SERIAL NOT NULL,
    "documentId" INTEGER NOT NULL,
    "tagId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DocumentTag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Group" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "order" INTEGER NOT NULL DEFAULT 0,
    "hidden" BOOLEAN NOT NULL DEFAULT false,
    "icon" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GroupUnit" (
    "id" SERIAL NOT NULL,
    "groupId" INTEGER NOT NULL,
    "unitId" INTEGER NOT NULL,
    "order" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GroupUnit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Message" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "message" TEXT NOT NULL,
    "channels" JSONB,
    "recipients" JSONB,
    "repeats" BOOLEAN NOT NULL DEFAULT false,
    "sendAt" TIMESTAMP(3),
    "sentAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Setting" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "group" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "payload" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Setting_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Schedule" (
    "id" SERIAL NOT NULL,
    "accountId" INTEGER NOT NULL,
    "modelType" TEXT,
    "modelId" INTEGER,
    "start" TIMESTAMP(3),
    "duration" INTEGER,
    "endType" TEXT,
    "count" INTEGER,
    "until" TIMESTAMP(3),
    "frequency" TEXT,
    "interval" INTEGER,
    "byDay" JSONB,
    "byMonth" JSONB,
    "bySetPosition" JSONB,
    "byMonthDay" JSONB,
    "byYearDay" JSONB,
    "rrule" TEXT,
    "lastOccurrence" TIMESTAMP(3),
    "nextOccurrence" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Schedule_pkey" PRIMARY KEY ("id")
);

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

-- AddForeignKey
ALTER TABLE "AwardRecord" ADD CONSTRAINT "AwardRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AwardRecord" ADD CONSTRAINT "AwardRecord_awardId_fkey" FOREIGN KEY ("awardId") REFERENCES "Award"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AwardRecord" ADD CONSTRAINT "AwardRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AwardRecord" ADD CONSTRAINT "AwardRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CombatRecord" ADD CONSTRAINT "CombatRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CombatRecord" ADD CONSTRAINT "CombatRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CombatRecord" ADD CONSTRAINT "CombatRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "QualificationRecord" ADD CONSTRAINT "QualificationRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "QualificationRecord" ADD CONSTRAINT "QualificationRecord_qualificationId_fkey" FOREIGN KEY ("qualificationId") REFERENCES "Qualification"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "QualificationRecord" ADD CONSTRAINT "QualificationRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "QualificationRecord" ADD CONSTRAINT "QualificationRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ServiceRecord" ADD CONSTRAINT "ServiceRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ServiceRecord" ADD CONSTRAINT "ServiceRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ServiceRecord" ADD CONSTRAINT "ServiceRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TrainingRecord" ADD CONSTRAINT "TrainingRecord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TrainingRecord" ADD CONSTRAINT "TrainingRecord_instructorId_fkey" FOREIGN KEY ("instructorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TrainingRecord" ADD CONSTRAINT "TrainingRecord_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TrainingRecord" ADD CONSTRAINT "TrainingRecord_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CalendarTag" ADD CONSTRAINT "CalendarTag_calendarId_fkey" FOREIGN KEY ("calendarId") REFERENCES "Calendar"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CalendarTag" ADD CONSTRAINT "CalendarTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_calendarId_fkey" FOREIGN KEY ("calendarId") REFERENCES "Calendar"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventTag" ADD CONSTRAINT "EventTag_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "Event"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventTag" ADD CONSTRAINT "EventTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentTag" ADD CONSTRAINT "DocumentTag_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "Document"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DocumentTag" ADD CONSTRAINT "DocumentTag_tagId_fkey" FOREIGN KEY ("tagId") REFERENCES "Tag"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GroupUnit" ADD CONSTRAINT "GroupUnit_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "Group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GroupUnit" ADD CONSTRAINT "GroupUnit_unitId_fkey" FOREIGN KEY ("unitId") REFERENCES "Unit"("id") ON DELETE CASCADE ON UPDATE CASCADE;

