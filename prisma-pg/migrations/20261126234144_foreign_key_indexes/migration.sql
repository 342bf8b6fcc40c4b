-- CreateIndex
CREATE INDEX "User_positionId_idx" ON "User"("positionId");

-- CreateIndex
CREATE INDEX "User_rankId_idx" ON "User"("rankId");

-- CreateIndex
CREATE INDEX "User_specialtyId_idx" ON "User"("specialtyId");

-- CreateIndex
CREATE INDEX "User_statusId_idx" ON "User"("statusId");

-- CreateIndex
CREATE INDEX "User_unitId_idx" ON "User"("unitId");

-- CreateIndex
CREATE INDEX "RankRecord_rankId_idx" ON "RankRecord"("rankId");

-- CreateIndex
CREATE INDEX "RankRecord_documentId_idx" ON "RankRecord"("documentId");

-- CreateIndex
CREATE INDEX "RankRecord_authorId_idx" ON "RankRecord"("authorId");

-- CreateIndex
CREATE INDEX "AssignmentRecord_statusId_idx" ON "AssignmentRecord"("statusId");

-- CreateIndex
CREATE INDEX "AssignmentRecord_unitId_idx" ON "AssignmentRecord"("unitId");

-- CreateIndex
CREATE INDEX "AssignmentRecord_positionId_idx" ON "AssignmentRecord"("positionId");

-- CreateIndex
CREATE INDEX "AssignmentRecord_documentId_idx" ON "AssignmentRecord"("documentId");

-- CreateIndex
CREATE INDEX "AssignmentRecord_authorId_idx" ON "AssignmentRecord"("authorId");

-- CreateIndex
CREATE INDEX "StatusRecord_statusId_idx" ON "StatusRecord"("statusId");

-- CreateIndex
CREATE INDEX "Document_authorId_idx" ON "Document"("authorId");

-- CreateIndex
CREATE INDEX "Form_submissionStatusId_idx" ON "Form"("submissionStatusId");

-- CreateIndex
CREATE INDEX "Task_formId_idx" ON "Task"("formId");

-- CreateIndex
CREATE INDEX "TaskAssignment_assignedById_idx" ON "TaskAssignment"("assignedById");

-- CreateIndex
CREATE INDEX "Comment_authorId_idx" ON "Comment"("authorId");

-- CreateIndex
CREATE INDEX "AwardRecord_documentId_idx" ON "AwardRecord"("documentId");

-- CreateIndex
CREATE INDEX "AwardRecord_authorId_idx" ON "AwardRecord"("authorId");

-- CreateIndex
CREATE INDEX "CombatRecord_documentId_idx" ON "CombatRecord"("documentId");

-- CreateIndex
CREATE INDEX "CombatRecord_authorId_idx" ON "CombatRecord"("authorId");

-- CreateIndex
CREATE INDEX "QualificationRecord_documentId_idx" ON "QualificationRecord"("documentId");

-- CreateIndex
CREATE INDEX "QualificationRecord_authorId_idx" ON "QualificationRecord"("authorId");

-- CreateIndex
CREATE INDEX "ServiceRecord_documentId_idx" ON "ServiceRecord"("documentId");

-- CreateIndex
CREATE INDEX "ServiceRecord_authorId_idx" ON "ServiceRecord"("authorId");

-- CreateIndex
CREATE INDEX "TrainingRecord_documentId_idx" ON "TrainingRecord"("documentId");

-- CreateIndex
CREATE INDEX "TrainingRecord_authorId_idx" ON "TrainingRecord"("authorId");

-- CreateIndex
CREATE INDEX "Event_authorId_idx" ON "Event"("authorId");

