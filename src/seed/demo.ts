import type { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import type { Store } from "../db/store.ts";
import { ensureAccount } from "../auth/accounts.ts";
import { Random } from "./random.ts";
import { silentProgress, type Progress } from "./progress.ts";

export interface SeedOptions {
  account: string;
  /** People in the organisation (at least 1). */
  users: number;
  /** Seed of the pseudo-random stream: the same seed and size give the same organisation. */
  seed?: number;
  /** Users written per batch. */
  batchSize?: number;
  progress?: (total: number) => Progress;
}

export interface SeedSummary {
  accountId: number;
  counts: Record<string, number>;
  ms: number;
}

const ranks: Array<[string, string, string]> = [
  ["Recruit", "RCT", "E-1"],
  ["Private", "PVT", "E-2"],
  ["Private First Class", "PFC", "E-3"],
  ["Specialist", "SPC", "E-4"],
  ["Corporal", "CPL", "E-4"],
  ["Sergeant", "SGT", "E-5"],
  ["Staff Sergeant", "SSG", "E-6"],
  ["Sergeant First Class", "SFC", "E-7"],
  ["Master Sergeant", "MSG", "E-8"],
  ["First Sergeant", "1SG", "E-8"],
  ["Sergeant Major", "SGM", "E-9"],
  ["Warrant Officer", "WO1", "W-1"],
  ["Second Lieutenant", "2LT", "O-1"],
  ["First Lieutenant", "1LT", "O-2"],
  ["Captain", "CPT", "O-3"],
  ["Major", "MAJ", "O-4"],
  ["Lieutenant Colonel", "LTC", "O-5"],
  ["Colonel", "COL", "O-6"],
];
const positions = [
  "Rifleman",
  "Automatic Rifleman",
  "Grenadier",
  "Team Leader",
  "Squad Leader",
  "Platoon Sergeant",
  "Platoon Leader",
  "Company Commander",
];
const specialties: Array<[string, string]> = [
  ["Infantryman", "11B"],
  ["Combat Medic", "68W"],
  ["Combat Engineer", "12B"],
  ["Signal Support", "25U"],
  ["Indirect Fire", "11C"],
  ["Cavalry Scout", "19D"],
  ["Intelligence Analyst", "35F"],
  ["Logistics", "92A"],
];
const statuses: Array<[string, string]> = [
  ["Active", "#16a34a"],
  ["Reserve", "#2563eb"],
  ["Leave of Absence", "#ca8a04"],
  ["Discharged", "#dc2626"],
  ["Retired", "#6b7280"],
];
const awards = [
  "Medal of Honor",
  "Distinguished Service Cross",
  "Silver Star",
  "Bronze Star",
  "Purple Heart",
  "Meritorious Service Medal",
  "Commendation Medal",
  "Achievement Medal",
  "Good Conduct Medal",
  "Recruiting Ribbon",
  "Marksmanship Badge",
  "Service Ribbon",
];
const qualifications = [
  "Basic Combat Training",
  "Advanced Individual Training",
  "Combat Lifesaver",
  "Marksman",
  "Sharpshooter",
  "Expert Marksman",
  "Airborne",
  "Air Assault",
  "Ranger",
  "Pathfinder",
  "Leadership Course",
  "Radio Operator",
];
const documents: Array<[string, string]> = [
  ["Enlistment Orders", "{user_name} is enlisted into the organisation on {date}."],
  ["Promotion Orders", "{user_name} is promoted to {rank_name} effective {date}."],
  [
    "Code of Conduct",
    "Members treat one another with respect, attend scheduled operations and follow the chain of command.",
  ],
];
const firstNames = [
  "James",
  "Mary",
  "John",
  "Patricia",
  "Robert",
  "Jennifer",
  "Michael",
  "Linda",
  "William",
  "Elizabeth",
  "David",
  "Barbara",
  "Richard",
  "Susan",
  "Joseph",
  "Jessica",
  "Thomas",
  "Sarah",
  "Charles",
  "Karen",
  "Daniel",
  "Nancy",
  "Matthew",
  "Lisa",
  "Anthony",
  "Betty",
  "Mark",
  "Sandra",
  "Paul",
  "Ashley",
  "Steven",
  "Emily",
  "Andrew",
  "Donna",
  "Joshua",
  "Michelle",
  "Kevin",
  "Carol",
  "Brian",
  "Amanda",
  "George",
  "Melissa",
];
const lastNames = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Jones",
  "Garcia",
  "Miller",
  "Davis",
  "Rodriguez",
  "Martinez",
  "Hernandez",
  "Lopez",
  "Gonzalez",
  "Wilson",
  "Anderson",
  "Thomas",
  "Taylor",
  "Moore",
  "Jackson",
  "Martin",
  "Lee",
  "Perez",
  "Thompson",
  "White",
  "Harris",
  "Sanchez",
  "Clark",
  "Ramirez",
  "Lewis",
  "Robinson",
  "Walker",
  "Young",
  "Allen",
  "King",
  "Wright",
  "Scott",
  "Torres",
  "Nguyen",
  "Hill",
  "Flores",
];
const nato = [
  "Alpha",
  "Bravo",
  "Charlie",
  "Delta",
  "Echo",
  "Foxtrot",
  "Golf",
  "Hotel",
  "India",
  "Juliett",
  "Kilo",
  "Lima",
  "Mike",
  "November",
];
const formFields = [
  { name: "Display name", key: "display_name", type: "text", required: true },
  { name: "Age", key: "age", type: "number", required: true },
  {
    name: "Timezone",
    key: "timezone",
    type: "select",
    required: true,
    options: ["UTC-8", "UTC-5", "UTC", "UTC+1", "UTC+10"],
  },
  { name: "Why do you want to join?", key: "motivation", type: "textarea", required: false },
];
const comments = [
  "Well deserved.",
  "Congratulations!",
  "Outstanding work on the last operation.",
  "Keep it up.",
  "Approved by the chain of command.",
];

/** The day the demo organisation was founded; every date is an offset from it, so the data is the same on each run. */
const founded = Date.UTC(2023, 0, 1, 12);
const day = 86_400_000;

/** Rows of a `createMany`, and the batch sizes the database takes well (SQLite's 32766 bound parameters). */
const rowsPerStatement = 500;

async function insert<T extends object>(
  model: { createMany(args: { data: T[] }): Promise<{ count: number }> },
  rows: T[],
): Promise<number> {
  for (let i = 0; i < rows.length; i += rowsPerStatement)
    await model.createMany({ data: rows.slice(i, i + rowsPerStatement) });
  return rows.length;
}

async function insertReturningIds<T extends object>(
  model: { createManyAndReturn(args: { data: T[]; select: { id: true } }): Promise<Array<{ id: number }>> },
  rows: T[],
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += rowsPerStatement) {
    ids.push(
      ...(await model.createManyAndReturn({ data: rows.slice(i, i + rowsPerStatement), select: { id: true } })).map(
        (r) => r.id,
      ),
    );
  }
  return ids;
}

/**
 * Writes a demo organisation of `users` people into `account` (created if new, and it must hold no people
 * yet): ranks, positions, specialties, units in groups, statuses, awards, qualifications, documents, an
 * enlistment form with fields and submissions, announcements, and people spread over them with their rank,
 * assignment, status, award and qualification records and comments. Written in batches; deterministic.
 */
export async function seedDemo(store: Store, options: SeedOptions): Promise<SeedSummary> {
  const prisma = store.prisma;
  const started = Date.now();
  const size = options.users;
  if (!Number.isInteger(size) || size < 1) throw new Error("--users takes a positive whole number");
  const batchSize = options.batchSize ?? 1000;
  const rng = new Random(options.seed ?? 1);
  const account = await ensureAccount(store, options.account);
  const accountId = account.id;
  if (
    (await prisma.user.count({ where: { accountId } })) > 0 ||
    (await prisma.rank.count({ where: { accountId } })) > 0
  ) {
    throw new Error(`Account "${options.account}" already has data; seed a new account`);
  }
  const counts: Record<string, number> = {};
  const add = (name: string, n: number) => (counts[name] = (counts[name] ?? 0) + n);
  const at = (offsetDays: number) => new Date(founded + Math.round(offsetDays * day));
  const stamp = (offsetDays: number) => ({ createdAt: at(offsetDays), updatedAt: at(offsetDays) });
  const progress = (options.progress ?? (() => silentProgress))(size);
  // One transaction per batch: a commit (and its fsync) per thousand people rather than per statement.
  const batch = <T>(work: (tx: PrismaClient) => Promise<T>) =>
    store.transaction((tx) => work(tx.prisma as PrismaClient), { maxWait: 30_000, timeout: 300_000 });

  const refs = await batch(async (tx) => {
    /** Rows of a reference table in the account, in order. */
    const ordered = <T extends object>(rows: T[]) =>
      rows.map((r, i) => ({ accountId, ...stamp(0), ...r, order: i + 1 }));
    const reference = async (name: string, inserted: Promise<number[]>) => {
      const ids = await inserted;
      add(name, ids.length);
      return ids;
    };
    const rankIds = await reference(
      "ranks",
      insertReturningIds(
        tx.rank,
        ordered(
          ranks.map(([name, abbreviation, paygrade]) => ({
            name,
            abbreviation,
            paygrade,
            description: `${name} (${paygrade})`,
          })),
        ),
      ),
    );
    const positionIds = await reference(
      "positions",
      insertReturningIds(tx.position, ordered(positions.map((name) => ({ name })))),
    );
    const specialtyIds = await reference(
      "specialties",
      insertReturningIds(tx.specialty, ordered(specialties.map(([name, abbreviation]) => ({ name, abbreviation })))),
    );
    const statusIds = await reference(
      "statuses",
      insertReturningIds(tx.status, ordered(statuses.map(([name, color]) => ({ name, color })))),
    );
    const awardIds = await reference(
      "awards",
      insertReturningIds(tx.award, ordered(awards.map((name) => ({ name, description: `Awarded as the ${name}.` })))),
    );
    const qualificationIds = await reference(
      "qualifications",
      insertReturningIds(tx.qualification, ordered(qualifications.map((name) => ({ name })))),
    );
    const unitCount = Math.min(nato.length * 40, Math.max(3, Math.ceil(size / 25)));
    const unitIds = await reference(
      "units",
      insertReturningIds(
        tx.unit,
        ordered(
          Array.from({ length: unitCount }, (_, i) => ({
            name: `${nato[i % nato.length]} ${Math.floor(i / nato.length) + 1}`,
            description: `Squad ${i + 1}`,
          })),
        ),
      ),
    );
    const groupCount = Math.ceil(unitCount / 4);
    const groupIds = await reference(
      "groups",
      insertReturningIds(
        tx.group,
        ordered(
          Array.from({ length: groupCount }, (_, i) => ({
            name: `${i === 0 ? "Headquarters" : `Platoon ${i}`}`,
            description: `Units ${i * 4 + 1} to ${Math.min(unitCount, i * 4 + 4)}`,
          })),
        ),
      ),
    );
    add(
      "group units",
      await insert(
        tx.groupUnit,
        unitIds.map((unitId, i) => ({ groupId: groupIds[Math.floor(i / 4)], unitId, order: (i % 4) + 1, ...stamp(0) })),
      ),
    );

    const fieldIds = await insertReturningIds(
      tx.field,
      formFields.map((f) => ({
        accountId,
        name: f.name,
        key: f.key,
        type: f.type,
        required: f.required,
        options: f.options ?? undefined,
        ...stamp(0),
      })),
    );
    add("fields", fieldIds.length);
    const [formId] = await insertReturningIds(tx.form, [
      {
        accountId,
        name: "Enlistment Application",
        slug: "enlistment",
        isPublic: true,
        description: "Apply to join the organisation.",
        instructions: "Answer every question.",
        successMessage: "Thank you, a recruiter will be in touch.",
        submissionStatusId: statusIds[1],
        ...stamp(0),
      },
    ]);
    add("forms", 1);
    add(
      "field links",
      await insert(
        tx.fieldLink,
        fieldIds.map((fieldId, i) => ({ fieldId, formId: formId, order: i + 1, ...stamp(0) })),
      ),
    );
    return { rankIds, positionIds, specialtyIds, statusIds, awardIds, qualificationIds, unitIds, formId: formId };
  });
  const { rankIds, positionIds, specialtyIds, statusIds, awardIds, qualificationIds, unitIds, formId } = refs;
  const unitCount = unitIds.length;
  const active = statusIds[0];

  let documentIds: number[] = [];
  let commander = 0;
  for (let from = 0; from < size; from += batchSize) {
    const people = Array.from({ length: Math.min(batchSize, size - from) }, (_, k) => {
      const n = from + k;
      const first = rng.pick(firstNames);
      const last = rng.pick(lastNames);
      // The first person commands; the rest are mostly junior, a few senior.
      const rankIndex =
        n === 0 ? ranks.length - 1 : Math.min(ranks.length - 2, Math.floor(rng.next() ** 2.5 * (ranks.length - 1)));
      const joined = n === 0 ? 0 : rng.int(1, 700);
      return {
        n,
        first,
        last,
        rankIndex,
        joined,
        unit: n === 0 ? 0 : rng.int(0, unitCount - 1),
        position: n === 0 ? positions.length - 1 : Math.min(positions.length - 2, Math.floor(rankIndex / 3)),
        specialty: rng.int(0, specialties.length - 1),
        status: n === 0 ? 0 : rng.chance(0.8) ? 0 : rng.int(1, statuses.length - 1),
      };
    });
    await batch(async (tx) => {
      const userIds = await insertReturningIds(
        tx.user,
        people.map((p) => ({
          accountId,
          name: `${p.first} ${p.last}`,
          email: `${p.first}.${p.last}.${p.n + 1}@example.com`.toLowerCase(),
          rankId: rankIds[p.rankIndex],
          unitId: unitIds[p.unit],
          positionId: positionIds[p.position],
          specialtyId: specialtyIds[p.specialty],
          statusId: statusIds[p.status],
          approved: true,
          emailVerifiedAt: at(p.joined),
          lastSeenAt: at(p.joined + 30),
          ...stamp(p.joined),
        })),
      );
      add("users", userIds.length);
      if (from === 0) {
        commander = userIds[0]!;
        documentIds = await insertReturningIds(
          tx.document,
          documents.map(([name, content]) => ({
            accountId,
            name,
            content,
            description: name,
            authorId: commander,
            ...stamp(0),
          })),
        );
        add("documents", documentIds.length);
        const announcements = [
          {
            title: "Welcome to the unit",
            content: "Read the Code of Conduct before your first operation.",
            color: "#2563eb",
            global: true,
          },
          {
            title: "Operation schedule",
            content: "Operations run every Saturday at 19:00 UTC.",
            color: "#16a34a",
            global: false,
          },
          {
            title: "Recruitment open",
            content: "The enlistment form is open to everyone.",
            color: "#ca8a04",
            global: false,
          },
        ];
        const announcementIds = await insertReturningIds(
          tx.announcement,
          announcements.map((a, i) => ({ accountId, ...a, enabled: true, ...stamp(i) })),
        );
        add("announcements", announcementIds.length);
        add(
          "newsfeed items",
          await insert(
            tx.newsfeedItem,
            announcements.map((a, i) => ({
              accountId,
              event: "created",
              subjectType: "App\\Models\\Announcement",
              subjectId: announcementIds[i],
              description: "created",
              causerId: commander,
              headline: a.title,
              text: a.content,
              properties: { headline: a.title, text: a.content },
              ...stamp(i),
            })),
          ),
        );
      }
      const [enlistment, promotion] = documentIds;

      const rankRecords: Prisma.RankRecordCreateManyInput[] = [];
      const assignmentRecords: Prisma.AssignmentRecordCreateManyInput[] = [];
      const statusRecords: Prisma.StatusRecordCreateManyInput[] = [];
      const awardRecords: Prisma.AwardRecordCreateManyInput[] = [];
      const qualificationRecords: Prisma.QualificationRecordCreateManyInput[] = [];
      const submissions: Prisma.SubmissionCreateManyInput[] = [];
      people.forEach((p, k) => {
        const userId = userIds[k];
        const author = { authorId: commander };
        // Promotions up to the current rank, a few of the steps between.
        const steps =
          p.rankIndex === 0
            ? [0]
            : [
                0,
                ...rng.sample(
                  rankIds.slice(1, p.rankIndex).map((_, i) => i + 1),
                  3,
                ),
                p.rankIndex,
              ];
        steps.forEach((rankIndex, i) =>
          rankRecords.push({
            accountId,
            userId,
            rankId: rankIds[rankIndex],
            type: 0,
            text: i === 0 ? "Enlisted" : `Promoted to ${ranks[rankIndex][0]}`,
            documentId: i === 0 ? enlistment : promotion,
            ...author,
            ...stamp(p.joined + i * 30),
          }),
        );
        assignmentRecords.push({
          accountId,
          userId,
          unitId: unitIds[p.unit],
          positionId: positionIds[p.position],
          specialtyId: specialtyIds[p.specialty],
          statusId: statusIds[p.status],
          type: "primary",
          text: "Assigned",
          ...author,
          ...stamp(p.joined),
        });
        if (rng.chance(0.15)) {
          assignmentRecords.push({
            accountId,
            userId,
            unitId: unitIds[rng.int(0, unitCount - 1)],
            positionId: positionIds[0],
            type: "secondary",
            text: "Attached",
            ...author,
            ...stamp(p.joined + 60),
          });
        }
        statusRecords.push({ statusId: active, userId, text: "Enlisted", ...stamp(p.joined) });
        if (p.status !== 0)
          statusRecords.push({
            statusId: statusIds[p.status],
            userId,
            text: statuses[p.status][0],
            ...stamp(p.joined + 200),
          });
        for (const awardId of rng.sample(awardIds, rng.int(0, 3)))
          awardRecords.push({
            accountId,
            userId,
            awardId,
            text: "For service",
            ...author,
            ...stamp(p.joined + rng.int(30, 300)),
          });
        for (const qualificationId of rng.sample(qualificationIds.slice(0, 6), rng.int(1, 3))) {
          qualificationRecords.push({
            accountId,
            userId,
            qualificationId,
            text: "Passed",
            ...author,
            ...stamp(p.joined + rng.int(1, 90)),
          });
        }
        if (p.n % 10 === 1 || p.n === size - 1) {
          submissions.push({
            accountId,
            formId,
            userId,
            readAt: rng.chance(0.5) ? at(p.joined) : null,
            ...stamp(p.joined - 1),
            data: {
              display_name: `${p.first} ${p.last}`,
              age: rng.int(18, 55),
              timezone: rng.pick(formFields[2].options!),
              motivation: "To serve with good people.",
            },
          });
        }
      });
      const rankRecordIds = await insertReturningIds(tx.rankRecord, rankRecords);
      add("rank records", rankRecordIds.length);
      add("assignment records", await insert(tx.assignmentRecord, assignmentRecords));
      add("status records", await insert(tx.statusRecord, statusRecords));
      add("award records", await insert(tx.awardRecord, awardRecords));
      add("qualification records", await insert(tx.qualificationRecord, qualificationRecords));
      add("submissions", await insert(tx.submission, submissions));
      const remarks = rankRecordIds
        .filter(() => rng.chance(0.1))
        .map((modelId) => ({
          accountId,
          authorId: commander,
          modelType: "App\\Models\\RankRecord",
          modelId,
          comment: rng.pick(comments),
          ...stamp(rng.int(1, 700)),
        }));
      add("comments", await insert(tx.comment, remarks));
    });
    progress.update(from + people.length, `users · ${Object.values(counts).reduce((a, b) => a + b, 0)} rows`);
  }
  const ms = Date.now() - started;
  progress.finish(`users · ${Object.values(counts).reduce((a, b) => a + b, 0)} rows in ${(ms / 1000).toFixed(1)} s`);
  return { accountId, counts, ms };
}

/** The summary as printed: one resource a line, then the total and the time. */
export function formatSummary(account: string, summary: SeedSummary): string {
  const total = Object.values(summary.counts).reduce((a, b) => a + b, 0);
  const width = Math.max(...Object.keys(summary.counts).map((k) => k.length));
  return [
    `Seeded account "${account}" (id ${summary.accountId}):`,
    ...Object.entries(summary.counts).map(([name, n]) => `  ${name.padEnd(width)}  ${n}`),
    `  ${"total".padEnd(width)}  ${total} rows in ${(summary.ms / 1000).toFixed(1)} s`,
  ].join("\n");
}
