import { FieldErrorBag, validationError } from "../core/errors.ts";
import { parseDate } from "../core/dates.ts";
import {
  belongsTo,
  belongsToMany,
  bool,
  datetime,
  defineResource,
  hasMany,
  hasManyOperations,
  int,
  morphMany,
  morphOne,
  ref,
  string,
  text,
  type ExposedScope,
  type FieldDef,
  json,
} from "./define.ts";
import {
  notificationChannel,
  notificationChannels,
  notificationInterval,
  notificationIntervals,
  type EnumDef,
} from "./enums.ts";
import { jsonInteger, jsonString, listOf, type JsonShape } from "./json-shapes.ts";
import { tagPivot, taggedScope } from "./forms.ts";
import { imageRoute } from "./routes.ts";

export { notificationChannels, notificationIntervals };

/** A JSON column holding a set of `set`'s values: a write may send one value alone; it is stored as a list. */
export const enumSet = (set: EnumDef, description: string): JsonShape =>
  listOf(jsonString({ enum: set }), { single: true, description });
/** A schedule's recurrence list (iCalendar's BYxxx rule parts). */
const byList = (items: JsonShape, description: string) => json(listOf(items, { description }), { nullable: true });

/**
 * Checks a JSON column holding a set of enum values: one value or a list of them, stored as a list.
 * Problems go to `bag` under the column's REST name.
 */
export function enumList(
  data: Record<string, unknown>,
  column: string,
  key: string,
  allowed: readonly string[],
  bag: FieldErrorBag,
): void {
  const value = data[column];
  if (value === undefined || value === null) return;
  const list = Array.isArray(value) ? value : [value];
  if (list.some((v) => typeof v !== "string" || !allowed.includes(v)))
    bag.add(key, `The selected ${key.replace(/_/g, " ")} is invalid.`);
  else data[column] = [...new Set(list)];
}

/** How an event or a message repeats. Shown through `include=schedule`; no routes of its own. */
export const schedule = defineResource({
  name: "schedule",
  model: "Schedule",
  fields: Object.fromEntries(
    Object.entries<FieldDef>({
      modelType: string({ nullable: true }),
      modelId: int({ nullable: true }),
      start: datetime(),
      duration: int({ nullable: true }),
      endType: string({ nullable: true }),
      count: int({ nullable: true }),
      until: datetime(),
      frequency: string({ nullable: true }),
      interval: int({ nullable: true }),
      byDay: byList(
        jsonString(),
        "iCalendar weekday codes (`MO`, `TU`... `SU`), each with an optional ordinal (`1MO`, `-1FR`).",
      ),
      byMonth: byList(jsonInteger(), "Months, 1 (January) to 12."),
      bySetPosition: byList(jsonInteger(), "Occurrences within the period: 1 the first, -1 the last."),
      byMonthDay: byList(jsonInteger(), "Days of the month, 1 to 31 (-1 the last)."),
      byYearDay: byList(jsonInteger(), "Days of the year, 1 to 366 (-1 the last)."),
      rrule: string({ nullable: true }),
      lastOccurrence: datetime(),
      nextOccurrence: datetime(),
    }).map(([name, f]) => [name, { ...f, writable: false }]),
  ),
});

export const calendar = defineResource({
  name: "calendar",
  model: "Calendar",
  path: "calendars",
  fields: { name: string({ required: true }), description: text(), color: string({ required: true }) },
  relations: {
    events: hasMany({ target: "event", field: "events", foreignKey: "calendarId" }),
    tags: belongsToMany({ target: "tag", field: "tags", pivot: tagPivot("CalendarTag", "calendarId") }),
  },
  includes: ["events", "events.author", "tags"],
  scopes: { tags: taggedScope() },
});

const date = (value: unknown): Date => (value instanceof Date ? value : parseDate(value));

/** `datePeriod(start, end)`: events that take place, at least in part, between the two dates. */
const datePeriod: ExposedScope = {
  parameters: 2,
  where([start, end]) {
    const bag = new FieldErrorBag();
    const bound = (value: unknown, name: string) => {
      try {
        return date(value);
      } catch {
        bag.add("scopes", `The ${name} of the date period must be a valid date.`);
        return null;
      }
    };
    const from = bound(start, "start");
    const to = bound(end, "end");
    bag.throwIfAny();
    return { starts: { lte: to }, ends: { gte: from } };
  },
};

export const event = defineResource({
  name: "event",
  model: "Event",
  path: "events",
  fields: {
    name: string({ required: true }),
    calendarId: ref("calendar", { required: true, nullable: false }),
    description: text(),
    content: text(),
    location: string({ nullable: true }),
    url: string({ nullable: true }),
    authorId: ref("user", { defaultsToCaller: true }),
    allDay: bool({ required: true }),
    starts: datetime({ required: true, nullable: false }),
    ends: datetime({ required: true, nullable: false }),
    repeats: bool(),
    registrationEnabled: bool(),
    registrationDeadline: datetime(),
    notificationsEnabled: bool(),
    notificationsInterval: json(
      enumSet(
        notificationInterval,
        "When reminders go out before the event: a list of intervals (one alone is taken as a list of one).",
      ),
      {
        nullable: true,
        invalid: "The selected notifications interval is invalid.",
      },
    ),
    notificationsChannels: json(
      enumSet(
        notificationChannel,
        "The channels reminders go out on: a list of channels (one alone is taken as a list of one).",
      ),
      {
        nullable: true,
        invalid: "The selected notifications channels is invalid.",
      },
    ),
  },
  relations: {
    calendar: belongsTo({ target: "calendar", foreignKey: "calendarId" }),
    author: belongsTo({ target: "user", foreignKey: "authorId", field: "author" }),
    image: morphOne({ target: "image" }),
    attachments: morphMany({ target: "attachment", field: "attachments" }),
    comments: morphMany({ target: "comment", field: "comments" }),
    schedule: morphOne({ target: "schedule" }),
    tags: belongsToMany({ target: "tag", field: "tags", pivot: tagPivot("EventTag", "eventId") }),
  },
  includes: [
    "attachments",
    "author",
    "author.*",
    "calendar",
    "calendar.*",
    "comments",
    "comments.*",
    "image",
    "schedule",
    "tags",
  ],
  // PERSCOM registers the event image as a has-many collection (plus search) over the latest image.
  nested: [imageRoute(hasManyOperations)],
  scopes: { datePeriod, tags: taggedScope() },
  hooks: {
    beforeWrite({ data, existing }) {
      const bag = new FieldErrorBag();
      enumList(data, "notificationsInterval", "notifications_interval", notificationIntervals, bag);
      enumList(data, "notificationsChannels", "notifications_channels", notificationChannels, bag);
      bag.throwIfAny();
      const starts = data.starts ?? existing?.starts;
      const ends = data.ends ?? existing?.ends;
      if (starts != null && ends != null && date(ends).getTime() < date(starts).getTime()) {
        throw validationError({ ends: ["The ends field must be a date after or equal to starts."] });
      }
    },
  },
});
