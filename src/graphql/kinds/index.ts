import type { OperationKind } from "../../resources/define.ts";
import { restFeedField } from "../changes.ts";
import { batchKinds } from "./batch.ts";
import { commandKind } from "./command.ts";
import { linkKinds } from "./links.ts";
import { listKinds } from "./list.ts";
import { rowKinds } from "./rows.ts";
import { publicFormKinds } from "./public-forms.ts";
import type { FacadeKind } from "./shared.ts";

/**
 * The operation kinds, one entry each: the REST facade (`src/graphql/operations.ts`) makes every operation's field
 * from its kind's entry, and switches on the kind nowhere else. A kind's module has its arguments, its field and
 * resolver, and (the link kinds) the public graph's mutations and the REST answer's keys. Adding a kind: its module,
 * an entry here, its word in `OperationKind` (src/resources/define.ts) and its route in src/resources/operations.ts.
 */
export const facadeKinds: Record<OperationKind, FacadeKind> = {
  ...listKinds,
  ...rowKinds,
  ...batchKinds,
  ...linkKinds,
  ...publicFormKinds,
  command: commandKind,
  /** The change feed (`GET /changes`): its module is src/graphql/changes.ts. */
  feed: { summary: (_op, w) => w.what, field: (t, op, p) => restFeedField(p.builder, t, op) },
};
