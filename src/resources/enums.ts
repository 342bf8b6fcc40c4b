/**
 * The closed sets of the registry: each is one GraphQL enum (its value names) and the wire values REST and the
 * database keep (`0`, `"primary"`). A field names its set with `FieldDef.enum`; its `oneOf` comes from here.
 */
export interface EnumValue {
  /** What REST sends and the database stores. */
  value: string | number;
  description: string;
}

export interface EnumDef {
  name: string;
  description: string;
  values: Record<string, EnumValue>;
}

const words = (value: string) => value.replace(/[_-]/g, " ");

/** Value names are the wire values in SCREAMING_SNAKE_CASE (`datetime-local` → `DATETIME_LOCAL`). */
const fromWire = (
  name: string,
  description: string,
  wire: readonly string[],
  describe: (value: string) => string,
): EnumDef => ({
  name,
  description,
  values: Object.fromEntries(
    wire.map((value) => [value.replace(/[-\s]/g, "_").toUpperCase(), { value, description: describe(value) }]),
  ),
});

export const rankRecordType: EnumDef = {
  name: "RankRecordType",
  description: "How a rank record changed the person's rank.",
  values: {
    PROMOTION: { value: 0, description: "To a higher rank." },
    DEMOTION: { value: 1, description: "To a lower rank." },
    LATERAL: { value: 2, description: "To another rank of the same grade." },
    TRANSFER: { value: 3, description: "Kept on a move to another organisation or branch." },
  },
};

export const assignmentType: EnumDef = {
  name: "AssignmentType",
  description: "Whether an assignment is the person's main one.",
  values: {
    PRIMARY: {
      value: "primary",
      description: "The person's main assignment: it sets their position, specialty, status and unit.",
    },
    SECONDARY: { value: "secondary", description: "An additional assignment beside the primary one." },
  },
};

export const fieldTypes = [
  "component_text",
  "boolean",
  "code",
  "color",
  "country",
  "date",
  "datetime-local",
  "email",
  "file",
  "number",
  "password",
  "select",
  "text",
  "textarea",
  "timezone",
] as const;
export const fieldType = fromWire(
  "FieldType",
  "The kind of input a custom field shows on a form.",
  fieldTypes,
  (v) => `A ${words(v)} input.`,
);

export const optionsTypes = ["array", "model"] as const;
export const fieldOptionsType: EnumDef = {
  name: "FieldOptionsType",
  description: "Where a select field's options come from.",
  values: {
    ARRAY: { value: "array", description: "The field's own `options` list." },
    MODEL: { value: "model", description: "The rows of a resource (`optionsModel`)." },
  },
};

export const optionsModels = [
  "awards",
  "calendars",
  "events",
  "forms",
  "groups",
  "documents",
  "positions",
  "qualifications",
  "ranks",
  "specialties",
  "statuses",
  "tasks",
  "slots",
  "units",
  "users",
] as const;
export const fieldOptionsModel = fromWire(
  "FieldOptionsModel",
  "The resource whose rows a select field offers as its options.",
  optionsModels,
  (v) => `The account's ${v}.`,
);

export const notificationIntervals = ["pt0m", "pt15m", "pt1h", "p1d", "p1w"] as const;
export const notificationInterval: EnumDef = {
  name: "NotificationInterval",
  description: "How long before an event its reminders go out (an ISO-8601 duration).",
  values: {
    PT0M: { value: "pt0m", description: "When the event starts." },
    PT15M: { value: "pt15m", description: "15 minutes before." },
    PT1H: { value: "pt1h", description: "An hour before." },
    P1D: { value: "p1d", description: "A day before." },
    P1W: { value: "p1w", description: "A week before." },
  },
};

export const notificationChannels = [
  "broadcast",
  "database",
  "discord_private",
  "discord_public",
  "mail",
  "sms",
] as const;
export const notificationChannel = fromWire(
  "NotificationChannel",
  "A channel notifications go out on.",
  notificationChannels,
  (v) => `The ${words(v)} channel.`,
);

/** Every closed set, by GraphQL name. */
export const enums: EnumDef[] = [
  rankRecordType,
  assignmentType,
  fieldType,
  fieldOptionsType,
  fieldOptionsModel,
  notificationInterval,
  notificationChannel,
];

/** `oneOf` of a field holding a value of `set`. */
export const wireValues = (set: EnumDef) => Object.values(set.values).map((v) => v.value);
