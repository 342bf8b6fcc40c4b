/**
 * Stored timestamps read field by field: several times faster than `new Date(text)`, which parses any form. Each
 * parser takes the one form its database stores and hands anything else to Date's parser.
 *
 * A Date read in its database's usual form keeps the text it was read from, and the time that text stands for, so that
 * showing it (`isoMicroseconds`) copies the text instead of computing every field again. Showing a date was the
 * largest part of writing a REST page's rows after the JSON itself (bench/FINDINGS.md, "Dates shown as they were
 * read"). The time is kept to check against: a Date changed in place since it was read is written from its fields.
 */
const STORED_TEXT = Symbol("stored text");
const STORED_TIME = Symbol("stored time");
type ReadDate = Date & { [STORED_TEXT]?: string; [STORED_TIME]?: number };

/** The number written in `text` from `from` to `to`, or NaN when a character there is not a digit. */
const digits = (text: string, from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
};

/**
 * `YYYY-MM-DD?HH:MM:SS` at the start of `value` with `millis`, as UTC; NaN when malformed, out of range (a 13th month,
 * a 30th of February, a 24th hour: Date.UTC would roll them over, and the text would no longer show the time) or a
 * year before 1000.
 */
function utcTime(value: string, millis: number): number {
  // Date.UTC maps years 0-99 to 1900-1999, and PERSCOM's form has four-digit years: those take the general path.
  if (value.charCodeAt(0) === 48) return NaN;
  const month = digits(value, 5, 7);
  const day = digits(value, 8, 10);
  const hours = digits(value, 11, 13);
  const minutes = digits(value, 14, 16);
  const seconds = digits(value, 17, 19);
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hours <= 23 && minutes <= 59 && seconds <= 59))
    return NaN;
  const time = Date.UTC(digits(value, 0, 4), month - 1, day, hours, minutes, seconds, millis);
  // Only the 29th to the 31st can roll over into the next month.
  return day > 28 && new Date(time).getUTCDate() !== day ? NaN : time;
}

function readDate(time: number, text: string): Date {
  const date: ReadDate = new Date(time);
  date[STORED_TEXT] = text;
  date[STORED_TIME] = time;
  return date;
}

/**
 * Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time. PostgreSQL's text form of a
 * four-digit year (`2025-02-04 17:19:00`, `.5` or `.123` after it) is read field by field; any other form (more
 * digits, BC) goes through Date's parser.
 */
export function parseTimestamp(value: string): Date {
  const fraction = value.length - 20;
  if (
    value.length >= 19 &&
    value.length <= 23 &&
    value.charCodeAt(10) === 32 &&
    (fraction < 0 || value.charCodeAt(19) === 46)
  ) {
    const time = utcTime(
      value,
      fraction > 0 ? digits(value, 20, value.length) * (fraction === 1 ? 100 : fraction === 2 ? 10 : 1) : 0,
    );
    if (!Number.isNaN(time)) return readDate(time, value);
  }
  return new Date(`${value.replace(" ", "T")}Z`);
}

/**
 * A DateTime as SQLite holds it: Prisma's and the writer's `2025-02-04T17:19:00.000+00:00` (read field by field), a
 * number of milliseconds, or any other text Date's parser reads (UTC unless it carries an offset).
 */
export function parseSqliteDate(value: unknown): Date {
  if (typeof value === "number") return new Date(value);
  const text = String(value);
  if (text.length === 29 && text.charCodeAt(10) === 84 && text.charCodeAt(19) === 46 && text.endsWith("+00:00")) {
    const time = utcTime(text, digits(text, 20, 23));
    if (!Number.isNaN(time)) return readDate(time, text);
  }
  const iso = text.replace(" ", "T");
  return new Date(/[zZ]$|[+-]\d\d:?\d\d$/.test(iso) || !iso.includes("T") ? iso : `${iso}Z`);
}

const twoDigits = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0"));
const threeDigits = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));

/** What follows PostgreSQL's text of each length (19 to 23: no fraction, a bare point, one to three digits) in the ISO form. */
const postgresEnds = [".000000Z", "000000Z", "00000Z", "0000Z", "000Z"];

/**
 * `date` in ISO-8601 UTC with microseconds, `2024-05-01T13:45:12.000000Z` (how the service shows every date): copied
 * from the text it was read from when it has one, else written from its UTC fields, five times faster than
 * toISOString (whose result needed its microseconds added too). Other years (six-digit, negative) and an invalid date
 * take toISOString's general form (which throws for the last).
 */
export function isoMicroseconds(date: Date): string {
  const text = (date as ReadDate)[STORED_TEXT];
  if (text !== undefined && (date as ReadDate)[STORED_TIME] === date.getTime()) {
    return text.length === 29
      ? `${text.slice(0, 23)}000Z`
      : `${text.replace(" ", "T")}${postgresEnds[text.length - 19]}`;
  }
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
  return `${year}-${twoDigits[date.getUTCMonth() + 1]}-${twoDigits[date.getUTCDate()]}T${twoDigits[date.getUTCHours()]}:${twoDigits[date.getUTCMinutes()]}:${twoDigits[date.getUTCSeconds()]}.${threeDigits[date.getUTCMilliseconds()]}000Z`;
}
