/*
 * Self-service rights: what every signed-in person may do whatever their roles (issue 42, item 2). A person's
 * credential (an SSO token, an access token of a person) holds each scope of this table as far as its `rows` reach:
 * `view:rankrecord` lets a person read their own rank records, not the account's. Scopes the person holds outright,
 * through a role, are not narrowed. API keys hold none of these: a key has exactly its scopes.
 *
 * `rows` is a Prisma `where` on the resource's model, for the person `me`. Reads through a right see only those rows
 * (root lists and lookups, nested lists, REST includes); a row reached through a to-one relation of a row the person
 * may see is shown (a record's rank, its author). Writes through a right reach only those rows and may set only
 * `fields` (input keys of the registry); `sets` are columns a create gets whatever the input says. A right with no
 * `fields` writes no row. `links` are the link operations a right stands in for: on the relation `field` of the
 * resource `parent`, of these kinds, where the parent is the person (`who: "parent"`, their own tasks) or the only
 * rows linked are the person (`who: "items"`, a like), changing only the link `columns` named.
 */

export type Where = Record<string, unknown>;

export interface SelfServiceLink {
  parent: string;
  field: string;
  kinds: ReadonlyArray<"attach" | "detach" | "sync" | "toggle" | "pivot">;
  who: "parent" | "items";
  columns?: readonly string[];
}

export interface SelfServiceRight {
  rows?: (me: number) => Where;
  fields?: readonly string[];
  sets?: (me: number) => Record<string, unknown>;
  links?: readonly SelfServiceLink[];
}

const own = (me: number): Where => ({ userId: me });
const mine = (relation: string) => (me: number) => ({ [relation]: { some: { userId: me } } });
const heldOrRecorded = (records: string) => (me: number) => ({
  OR: [{ users: { some: { id: me } } }, { [records]: { some: { userId: me } } }],
});

export const selfServiceRights: Readonly<Record<string, SelfServiceRight>> = {
  // Their own user, with the rows its relations name.
  "view:user": { rows: (me) => ({ id: me }) },
  "update:user": { rows: (me) => ({ id: me }), fields: ["name", "profilePhoto", "coverPhoto"] },
  "view:role": { rows: mine("userLinks") },
  "view:rank": { rows: heldOrRecorded("rankRecords") },
  "view:unit": { rows: heldOrRecorded("assignmentRecords") },
  "view:position": { rows: heldOrRecorded("assignmentRecords") },
  "view:specialty": { rows: heldOrRecorded("assignmentRecords") },
  "view:status": { rows: heldOrRecorded("assignmentRecords") },
  "view:award": { rows: mine("records") },
  "view:qualification": { rows: mine("records") },
  // Their records.
  "view:rankrecord": { rows: own },
  "view:assignmentrecord": { rows: own },
  "view:awardrecord": { rows: own },
  "view:combatrecord": { rows: own },
  "view:qualificationrecord": { rows: own },
  "view:servicerecord": { rows: own },
  "view:trainingrecord": { rows: own },
  // Their submissions, made as themselves.
  "view:submission": { rows: own },
  "create:submission": { fields: ["formId", "data"], sets: (me) => ({ userId: me }) },
  // Their tasks, which they mark complete.
  "view:task": { rows: mine("assignments") },
  "update:task": {
    rows: mine("assignments"),
    links: [{ parent: "user", field: "taskAssignments", kinds: ["pivot"], who: "parent", columns: ["completedAt"] }],
  },
  // Messages sent to them: `recipients` is a JSON list of user ids.
  "view:message": { rows: (me) => ({ recipients: { array_contains: [me] } }) },
  // Liking a newsfeed item, and unliking it, as themselves.
  "update:newsfeed": { links: [{ parent: "newsfeedItem", field: "likes", kinds: ["attach", "detach"], who: "items" }] },
};
