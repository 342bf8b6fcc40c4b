import { GraphQLError } from "graphql";
import { isoMicroseconds } from "./timestamps.ts";

/** PERSCOM's date format: ISO-8601 UTC with microseconds, `2024-05-01T13:45:12.000000Z`. */
export function formatDate(value: Date | string): string {
  return isoMicroseconds(value instanceof Date ? value : new Date(value));
}

/** Accepts ISO-8601 (any fraction digits), `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS`; UTC unless an offset is given. */
export function parseDate(value: unknown): Date {
  if (typeof value !== "string" || value.trim() === "") throw new GraphQLError("must be a valid date");
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
    value.trim(),
  );
  if (!m) throw new GraphQLError("must be a valid date");
  const [, day, time = "00:00:00", fraction = "0", zone = "Z"] = m;
  const millis = fraction.padEnd(3, "0").slice(0, 3);
  const date = new Date(`${day}T${time.length === 5 ? `${time}:00` : time}.${millis}${zone.toUpperCase()}`);
  const rolledOver =
    zone.toUpperCase() === "Z" && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) !== day;
  if (Number.isNaN(date.getTime()) || rolledOver) {
    throw new GraphQLError("must be a valid date");
  }
  return date;
}
