import { describe, expect, it } from "vitest";
import { parseSqliteDate, parseTimestamp } from "../src/core/timestamps.ts";
import { formatDate } from "../src/core/dates.ts";

/** Times from year 100 to 9999, each millisecond digit pattern, and the edges of months and leap days. */
const times = [
  ...Array.from(
    { length: 500 },
    (_, i) =>
      Date.UTC(100, 0, 1) +
      Math.floor((((i * 7_919_633) % 1_000_003) / 1_000_003) * (Date.UTC(9999, 11, 31) - Date.UTC(100, 0, 1))),
  ),
  Date.UTC(2024, 1, 29, 23, 59, 59, 999),
  Date.UTC(2025, 0, 1),
  Date.UTC(1970, 0, 1),
  Date.UTC(1969, 11, 31, 23, 59, 59, 1),
];

describe("PERSCOM's dates written from their fields", () => {
  it("match toISOString with microseconds added, for every year", () => {
    for (const time of [
      ...times,
      Date.UTC(-5, 0, 1),
      Date.UTC(12_345, 5, 6, 7, 8, 9, 10),
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
    ]) {
      const iso = new Date(time).toISOString();
      expect(formatDate(new Date(time)), iso).toBe(iso.replace(/\.(\d{3})Z$/, ".$1000Z"));
    }
    expect(formatDate("2025-02-04T17:19:00.5Z")).toBe("2025-02-04T17:19:00.500000Z");
    expect(() => formatDate("not a date")).toThrow(RangeError);
  });
});

describe("stored timestamps read field by field", () => {
  it("SQLite's stored form gives the same instant as Date's parser", () => {
    for (const time of times) {
      const stored = new Date(time).toISOString().replace("Z", "+00:00");
      expect(parseSqliteDate(stored).getTime(), stored).toBe(new Date(stored).getTime());
    }
  });

  it("SQLite's other forms still parse: offsets, no fraction, a space, a date, milliseconds, years before 100", () => {
    const cases: Array<[unknown, string]> = [
      ["2025-02-04T17:19:00.000+02:00", "2025-02-04T15:19:00.000Z"],
      ["2025-02-04 17:19:00", "2025-02-04T17:19:00.000Z"],
      ["2025-02-04T17:19:00", "2025-02-04T17:19:00.000Z"],
      ["2025-02-04T17:19:00.5Z", "2025-02-04T17:19:00.500Z"],
      ["2025-02-04", "2025-02-04T00:00:00.000Z"],
      [Date.UTC(2025, 1, 4), "2025-02-04T00:00:00.000Z"],
      ["0050-06-01T00:00:00.000+00:00", "0050-06-01T00:00:00.000Z"],
    ];
    for (const [stored, iso] of cases) expect(parseSqliteDate(stored).toISOString(), String(stored)).toBe(iso);
    expect(Number.isNaN(parseSqliteDate("2025-02-3xT17:19:00.000+00:00").getTime())).toBe(true);
  });

  it("PostgreSQL's text form of timestamp(3) gives the same instant as Date's parser", () => {
    for (const time of times) {
      const iso = new Date(time).toISOString();
      for (const text of [iso.slice(0, 23), iso.slice(0, 21), iso.slice(0, 19)].map((t) => t.replace("T", " "))) {
        expect(parseTimestamp(text).getTime(), text).toBe(new Date(`${text.replace(" ", "T")}Z`).getTime());
      }
    }
    expect(parseTimestamp("0050-06-01 00:00:00").toISOString()).toBe("0050-06-01T00:00:00.000Z");
  });
});

describe("dates shown as they were read", () => {
  const shown = (date: Date) => date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

  it("a date read from either database's text shows the same as one written from its fields", () => {
    for (const time of times) {
      const iso = new Date(time).toISOString();
      const expected = shown(new Date(time));
      expect(formatDate(parseSqliteDate(iso.replace("Z", "+00:00"))), iso).toBe(expected);
      for (const text of [iso.slice(0, 23), iso.slice(0, 21), iso.slice(0, 19)].map((t) => t.replace("T", " "))) {
        const date = parseTimestamp(text);
        expect(formatDate(date), text).toBe(shown(date));
      }
    }
    expect(formatDate(parseTimestamp("2025-02-04 17:19:00."))).toBe("2025-02-04T17:19:00.000000Z");
    expect(formatDate(parseTimestamp("2025-02-04 17:19:00.5"))).toBe("2025-02-04T17:19:00.500000Z");
    expect(formatDate(parseTimestamp("2025-02-04 17:19:00.05"))).toBe("2025-02-04T17:19:00.050000Z");
  });

  it("fields out of range are not copied from the text: the date shows what Date's parser made of it", () => {
    for (const text of [
      "2025-02-30T00:00:00.000+00:00",
      "2023-02-29T00:00:00.000+00:00",
      "2025-04-31T12:00:00.000+00:00",
      "2025-13-01T00:00:00.000+00:00",
      "2025-01-01T24:00:00.000+00:00",
      "2025-01-01T23:60:00.000+00:00",
      "2025-01-01T23:59:60.000+00:00",
      "2025-00-10T00:00:00.000+00:00",
    ]) {
      const date = parseSqliteDate(text);
      if (Number.isNaN(date.getTime())) {
        expect(() => formatDate(date), text).toThrow(RangeError);
        continue;
      }
      expect(formatDate(date), text).toBe(shown(date));
      expect(formatDate(date), text).not.toBe(`${text.slice(0, 23)}000Z`);
    }
    const pg = parseTimestamp("2025-02-30 00:00:00");
    expect(formatDate(pg)).toBe(shown(pg));
    expect(formatDate(pg)).not.toBe("2025-02-30T00:00:00.000000Z");
    expect(formatDate(parseSqliteDate("2024-02-29T23:59:59.999+00:00"))).toBe("2024-02-29T23:59:59.999000Z");
  });

  it("a date changed after it was read shows its new time", () => {
    const sqlite = parseSqliteDate("2025-02-04T17:19:00.000+00:00");
    sqlite.setUTCHours(5);
    expect(formatDate(sqlite)).toBe("2025-02-04T05:19:00.000000Z");
    const postgres = parseTimestamp("2025-02-04 17:19:00.123");
    postgres.setTime(Date.UTC(2030, 0, 2, 3, 4, 5, 6));
    expect(formatDate(postgres)).toBe("2030-01-02T03:04:05.006000Z");
  });
});
