import type { ComputedField, FieldDef, RelationDef, ResourceDef, ViewDef } from "./define.ts";
import { relationField } from "./define.ts";

/**
 * The API documentation of the registry: what each resource, column, computed field and relation is, worded once
 * here (from the spec and PERSCOM's own descriptions) for every resource that shares the name. A definition's own
 * `description` wins; `"<resource>.<name>"` entries word a name whose meaning differs on one resource.
 */
const resourceDescriptions: Record<string, string> = {
  user: "A member of the organisation: their profile and current rank, position, specialty, unit and status.",
  rank: "A rank a user can hold, such as Private or Captain; ordered from lowest to highest by `order`.",
  rankRecord:
    "An entry in a user's rank history: a promotion, demotion, lateral move or transfer. Creating one sets the user's rank.",
  assignmentRecord:
    "An entry in a user's assignment history: the unit, position, specialty and status they were given. A primary one sets the user's current assignment.",
  awardRecord: "An award given to a user.",
  combatRecord: "An entry in a user's combat history.",
  qualificationRecord: "A qualification a user earned.",
  serviceRecord: "An entry in a user's service history.",
  trainingRecord: "A training a user completed, with its instructor.",
  specialty: "A job specialty (such as an MOS) a user can be assigned.",
  position: "A position (billet) a user can be assigned, such as Squad Leader.",
  unit: "A unit of the organisation users are assigned to.",
  group: "A group of units, as the roster shows them.",
  status: "A status a user or a form submission can have, such as Active or Pending.",
  qualification: "A qualification users can earn.",
  award: "An award users can receive.",
  document: "A document, such as a certificate or an order, that records can attach.",
  category: "A category that sorts ranks, awards, qualifications, documents or forms.",
  calendar: "A calendar that holds events.",
  event: "An event on a calendar.",
  schedule: "When a repeating event or message recurs (an iCalendar recurrence rule).",
  announcement: "An announcement shown to the organisation's users.",
  message: "A message sent to users through notification channels.",
  setting: "An account setting, stored as a key and a JSON payload.",
  form: "A form users fill in; its fields define what a submission holds.",
  tag: "A tag that labels forms, calendars, events and documents.",
  field: "A custom field of a form or of user profiles.",
  submission: "A filled-in form.",
  task: "A task that can be assigned to users.",
  comment: "A comment on a record or another commentable row.",
  image: "An image attached to a rank, award, unit or other row.",
  attachment: "A file attached to a record or a task.",
  newsfeedItem: "An item of the account's newsfeed: something that happened, such as a new record or announcement.",
  categoryForm: "A form's place in a category.",
  categoryQualification: "A qualification's place in a category.",
  categoryRank: "A rank's place in a category.",
  categoryAward: "An award's place in a category.",
  categoryDocument: "A document's place in a category.",
  fieldLink: "A custom field's place on a form or on a user's profile.",
  statusRecord: "An entry in the status history of a user or a submission.",
  taskAssignment: "A task assigned to a user, with its dates.",
  formTag: "A tag on a form.",
  calendarTag: "A tag on a calendar.",
  eventTag: "A tag on an event.",
  documentTag: "A tag on a document.",
  groupUnit: "A unit's place in a group.",
  newsfeedLike: "A user's like of a newsfeed item.",
};

const fieldDescriptions: Record<string, string> = {
  name: "The name shown to users.",
  description: "A longer description. Supports HTML.",
  order: "Position in lists, lowest first. Computed as the next free position when omitted on create.",
  abbreviation: "Short form of the name, such as PVT.",
  paygrade: "The rank's pay grade, such as E-1.",
  hidden: "Hidden from the roster and other public listings.",
  icon: "A Heroicon name shown beside the name.",
  color: "A colour as a 6-digit hex code.",
  text: "Free text about the record. Supports HTML.",
  content: "The body. Supports HTML.",
  title: "The headline shown to users.",
  type: "The kind of row.",
  userId: "Id of the user this belongs to.",
  authorId: "Id of the user who wrote it; the signed-in person (or the API key's user) when omitted on create.",
  documentId: "Id of the document that goes with it.",
  rankId: "Id of the rank.",
  statusId: "Id of the status.",
  unitId: "Id of the unit.",
  positionId: "Id of the position.",
  specialtyId: "Id of the specialty.",
  awardId: "Id of the award.",
  qualificationId: "Id of the qualification.",
  categoryId: "Id of the category.",
  calendarId: "Id of the calendar.",
  formId: "Id of the form.",
  fieldId: "Id of the custom field.",
  tagId: "Id of the tag.",
  taskId: "Id of the task.",
  eventId: "Id of the event.",
  groupId: "Id of the group.",
  submissionId: "Id of the submission.",
  newsfeedItemId: "Id of the newsfeed item.",
  instructorId: "Id of the user who gave the training.",
  assignedById: "Id of the user who assigned the task.",
  submissionStatusId: "Id of the status new submissions of this form get.",
  causerId: "Id of the user whose action created the item.",
  modelType: "The kind of row this belongs to, as PERSCOM names it (`App\\Models\\User`).",
  modelId: "Id of the row this belongs to.",
  filename: "The uploaded file's original name.",
  path: "Where the file is stored, relative to the file store.",
  email: "The user's email address; unique within the account.",
  emailVerifiedAt: "When the user verified their email address.",
  approved: "Whether the user's account is approved.",
  notes: "Private notes about the user. Supports HTML.",
  notesUpdatedAt: "When the notes last changed; set by the API.",
  profilePhoto: "Stored path of the profile photo; upload one with `profilePhoto`.",
  coverPhoto: "Stored path of the cover photo; upload one with `coverPhoto`.",
  lastSeenAt: "When the user was last seen.",
  discordUserId: "The user's Discord id.",
  facebookUserId: "The user's Facebook id.",
  githubUserId: "The user's GitHub id.",
  googleUserId: "The user's Google id.",
  resource: "The kind of rows the category sorts, as PERSCOM names it (`App\\Models\\Rank`).",
  allDay: "Whether the event lasts whole days.",
  starts: "When the event starts.",
  ends: "When the event ends.",
  location: "Where the event takes place.",
  url: "A link for the event.",
  repeats: "Whether it repeats on its schedule.",
  registrationEnabled: "Whether users can register for the event.",
  registrationDeadline: "When registration closes.",
  notificationsEnabled: "Whether users are reminded of the event.",
  notificationsInterval: "How long before the event reminders go out.",
  notificationsChannels: "The channels reminders go out on.",
  frequency: "How often it repeats: DAILY, WEEKLY, MONTHLY or YEARLY.",
  interval: "Repeat every this many periods of `frequency`.",
  start: "When the first occurrence starts.",
  duration: "How long each occurrence lasts, in hours.",
  endType: "When repeating stops: never, after `count` occurrences, or on `until`.",
  count: "How many occurrences there are when `endType` is after.",
  until: "The date repeating stops when `endType` is on.",
  byDay: "Days of the week it repeats on.",
  byMonth: "Months it repeats in.",
  byMonthDay: "Days of the month it repeats on.",
  byYearDay: "Days of the year it repeats on.",
  bySetPosition: "Which occurrence within the period (1 first, -1 last).",
  rrule: "The schedule as an iCalendar RRULE.",
  lastOccurrence: "When it last occurred.",
  nextOccurrence: "When it next occurs.",
  enabled: "Whether the announcement is shown.",
  global: "Whether the announcement is shown across the whole site.",
  expiresAt: "When it expires.",
  message: "The message's body. Supports HTML.",
  channels: "The notification channels it is sent on.",
  recipients: "Ids of the users it goes to; everyone when empty.",
  sendAt: "When to send it; a future date delays it.",
  sentAt: "When it was sent; set by the API.",
  group: "The group of settings it belongs to.",
  locked: "Whether the setting can be changed.",
  payload: "The setting's value.",
  slug: "The form's unique name in URLs.",
  successMessage: "Shown after a successful submission. Supports HTML.",
  isPublic: "Whether people without an account can submit the form.",
  instructions: "Instructions shown to users. Supports HTML.",
  key: "The field's unique key; a submission stores its value under this key.",
  cast: "How the value is stored and read (string, boolean, date...).",
  placeholder: "Text shown in the empty input.",
  default: "The value the input starts with.",
  help: "Help text shown with the input.",
  required: "Whether a value must be given.",
  rules: "Laravel validation rules the value must pass.",
  readonly: "Whether users can see but not change the value.",
  options: "The choices of a select field (value to label).",
  optionsType: "Where the choices come from: array (`options`) or model (`optionsModel`).",
  optionsModel: "The kind of rows whose names are the choices when `optionsType` is model.",
  data: "The submitted values, keyed by field key.",
  readAt: "When the submission was first read; set by the API.",
  logName: "The newsfeed the item belongs to.",
  event: "What happened (created, updated, deleted).",
  subjectType: "The kind of row the item is about, as PERSCOM names it.",
  subjectId: "Id of the row the item is about.",
  headline: "The item's headline.",
  properties: "More about the item as JSON.",
  assignedAt: "When the task was assigned.",
  dueAt: "When the task is due.",
  completedAt: "When the task was completed.",
  "rankRecord.type":
    "The kind of rank change: promotion, demotion, lateral or transfer (REST sends 0, 1, 2, 3; GraphQL the RankRecordType names).",
  "assignmentRecord.type": "primary (sets the user's current assignment) or secondary.",
  "field.type": "The kind of input, such as text, select or date.",
  "field.description": "Describes the field to users. Supports HTML.",
  "user.name": "The user's full name.",
  "user.rankId": "Id of the user's current rank; set by their latest rank record.",
  "user.positionId": "Id of the user's current position; set by their latest primary assignment record.",
  "user.specialtyId": "Id of the user's current specialty; set by their latest primary assignment record.",
  "user.unitId": "Id of the user's current unit; set by their latest primary assignment record.",
  "user.statusId": "Id of the user's current status.",
  "comment.comment": "The comment's text. Supports HTML.",
  "newsfeedItem.description": "The change the item records (created, updated...).",
  "statusRecord.text": "Why the status changed.",
};

const computedDescriptions: Record<string, string> = {
  displayName: "The name to show for the user.",
  online: "Whether the user is online now (always false: Muster keeps no presence).",
  profilePhotoUrl: "URL of the user's profile photo, or a generated picture of their initials.",
  coverPhotoUrl: "URL of the user's cover photo, if any.",
  lastAssignmentChangeDate: "When the user's latest primary assignment record was created, or null.",
  lastRankChangeDate: "When the user's latest rank record was created, or null.",
  imageUrl: "URL of the image file.",
  attachmentUrl: "URL of the attached file.",
  options: "The choices of a select field, `[]` when there are none.",
  expired: "Whether the task expired before it was completed.",
  pastDue: "Whether the task is past its due date and not completed.",
  status: "The assignment's state: assigned, past_due, expired, complete, complete_past_due or complete_expired.",
  "statusRecord.modelType": "The kind of row whose status this is: `App\\Models\\User` or `App\\Models\\Submission`.",
  "statusRecord.modelId": "Id of the user or submission whose status this is.",
};

const relationDescriptions: Record<string, string> = {
  "user.rank": "The user's current rank; set by their latest rank record.",
  "user.position": "The user's current position; set by their latest primary assignment record.",
  "user.specialty": "The user's current specialty; set by their latest primary assignment record.",
  "user.unit": "The user's current unit; set by their latest primary assignment record.",
  "user.status": "The user's current status.",
  "user.fieldLinks": "The custom fields on the user's profile, in order.",
  "user.statusRecords": "The user's status history, newest first.",
  "user.taskAssignments": "The tasks assigned to the user.",
  author: "The user who wrote it.",
  user: "The user it belongs to.",
  document: "The document that goes with it, or null.",
  image: "Its image, or null.",
  attachments: "Files attached to it.",
  comments: "Comments on it.",
  "rankRecord.rank": "The rank the user was given.",
  "awardRecord.award": "The award the user received.",
  "qualificationRecord.qualification": "The qualification the user earned.",
  "form.submissionStatus": "The status new submissions of the form get, or null.",
  instructor: "The user who gave the training.",
  assignedBy: "The user who assigned the task.",
  causer: "The user whose action created the item.",
};

const words = (name: string) => name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
const lookup = (table: Record<string, string>, def: ResourceDef, key: string) =>
  Object.hasOwn(table, `${def.name}.${key}`)
    ? table[`${def.name}.${key}`]
    : Object.hasOwn(table, key)
      ? table[key]
      : undefined;

/** What a row of `def` is. */
export const resourceDescription = (def: ResourceDef): string =>
  def.description ?? resourceDescriptions[def.name] ?? `A ${def.label.toLowerCase()}.`;

/** What the column `key` of `def` holds. */
export const fieldDescription = (def: ResourceDef, key: string, field: FieldDef): string =>
  field.description ?? lookup(fieldDescriptions, def, key) ?? `The ${words(key)}.`;

/** What the computed field `key` of `def` gives. */
export const computedDescription = (def: ResourceDef, key: string, field: ComputedField): string =>
  field.description ?? lookup(computedDescriptions, def, key) ?? `The ${words(key)}.`;

/** What a relation of `def` leads to. */
export function relationDescription(def: ResourceDef, rel: RelationDef): string {
  const field = relationField(rel);
  const worded = rel.description ?? lookup(relationDescriptions, def, field);
  if (worded) return worded;
  const own = def.label.toLowerCase();
  switch (rel.kind) {
    case "belongsTo":
      return `The ${words(rel.target)} of this ${own} (by \`${rel.foreignKey}\`), or null.`;
    case "hasMany":
      return rel.filter
        ? `The ${own}'s ${words(rel.target)}s where ${Object.entries(rel.filter.where)
            .map(([k, v]) => `${k} is ${JSON.stringify(v)}`)
            .join(" and ")}.`
        : `The ${own}'s ${words(rel.target)}s.`;
    case "belongsToMany":
      return `Links of this ${own} to ${words(rel.target)}s, each with its ${words(rel.pivot.related)} and link columns.`;
    case "morphOne":
      return `The ${own}'s ${words(rel.target)}, or null.`;
    case "morphMany":
      return `The ${own}'s ${words(rel.target)}s.`;
    case "morphTo":
      return `The row this ${own} belongs to (by \`modelType\` and \`modelId\`), or null.`;
  }
}

/** What a view lists. */
export const viewDescription = (def: ResourceDef, view: ViewDef): string =>
  view.description ?? resourceDescription(def);
