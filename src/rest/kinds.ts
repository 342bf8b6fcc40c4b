import type { OperationKind, PivotDef } from "../resources/define.ts";
import { pivotOf, type Operation, type Returns } from "../resources/operations.ts";
import { FieldErrorBag, validationError } from "../core/errors.ts";
import { snake } from "../core/names.ts";
import { changesOf, type LinkKind } from "../graphql/kinds/links.ts";
import {
  batchItems,
  coerce,
  flag,
  idList,
  idOf,
  inputOf,
  isObject,
  linkItems,
  newItems,
  pageParam,
  pivotObject,
  prototypeNamesIn,
  refusePrototypeNames,
  searchVariables,
  type Body,
} from "./body.ts";
import { feedEnvelope, feedVariables, FEED_SELECTION, type FeedResult } from "./changes.ts";
import { paginated, type PageResult } from "./envelope.ts";
import type { Shaper } from "./selection.ts";
import {
  publicFormSelection,
  publicFormEnvelope,
  publicSubmitVariables,
  SUBMISSION_SELECTION,
} from "./public-forms.ts";

/*
 * The operation kinds in REST, two tables: each kind's GraphQL variables (from the route's ids, the query string and
 * the body), and each answer (`Returns`: a page, rows, a row, changed ids, a status, the feed) as the document's
 * selection and PERSCOM's envelope. The kinds' arguments, fields and resolvers are src/graphql/kinds/.
 */

type Variables = (op: Operation, pivot: PivotDef | undefined, query: URLSearchParams, body: Body, vars: Body) => void;

const none: Variables = () => {};
const withInput: Variables = (op, pivot, _query, body, vars) => {
  vars.input = inputOf(op.def, body);
  if (pivot) {
    const values = pivotObject(pivot, body.pivot, "pivot");
    if (Object.keys(pivot.fields).length) vars.pivot = values;
  }
};
const withIds: Variables = (_op, _pivot, _query, body, vars) => {
  vars.resources = idList(body);
};

/** Each kind's variables, after the route's ids. */
const variablesOfKind: Record<OperationKind, Variables> = {
  show: none,
  delete: none,
  dissociate: none,
  command: none,
  publicShow: none,
  publicSubmit: (_op, _pivot, _query, body, vars) => Object.assign(vars, publicSubmitVariables(body)),
  feed: (_op, _pivot, query, _body, vars) => Object.assign(vars, feedVariables(query)),
  list: (_op, _pivot, query, _body, vars) => {
    vars.page = pageParam(query, {}, "page");
    vars.limit = pageParam(query, {}, "limit");
  },
  search: (_op, _pivot, query, body, vars) => {
    vars.page = pageParam(query, body, "page");
    vars.limit = pageParam(query, body, "limit");
    Object.assign(vars, searchVariables(body));
  },
  batchCreate: (op, pivot, _query, body, vars) => {
    vars.resources = newItems(op, pivot, body);
  },
  associate: (_op, _pivot, _query, body, vars) => {
    const id = idOf(body.related_key);
    if (id === null)
      throw validationError({ related_key: ["The related key field is required and must be a positive integer id."] });
    vars.relatedKey = id;
  },
  action: (op, _pivot, _query, body, vars) => {
    if (op.action!.input) {
      const fields = Object.entries(op.action!.input).filter(([name]) => Object.hasOwn(body, snake(name)));
      vars.input = Object.fromEntries(fields.map(([name, f]) => [name, coerce(f, body[snake(name)])]));
    }
  },
  create: withInput,
  update: withInput,
  attach: (_op, pivot, _query, body, vars) => {
    vars.resources = linkItems(pivot, body);
    vars.duplicates = flag(body, "duplicates");
  },
  sync: (_op, pivot, _query, body, vars) => {
    vars.resources = linkItems(pivot, body);
    vars.detaching = flag(body, "detaching");
  },
  toggle: (_op, pivot, _query, body, vars) => {
    vars.resources = linkItems(pivot, body);
  },
  detach: withIds,
  batchDelete: withIds,
  batchUpdate: (op, pivot, _query, body, vars) => {
    vars.resources = batchItems(op, pivot, body);
  },
  pivot: (_op, pivot, _query, body, vars) => {
    if (!isObject(body.pivot)) throw validationError({ pivot: ["The pivot field is required and must be an object."] });
    if (pivot) vars.pivot = pivotObject(pivot, body.pivot, "pivot");
    else {
      // A polymorphic relation has no link row: its pivot object is accepted and changes nothing.
      const bag = new FieldErrorBag();
      refusePrototypeNames(body.pivot, "pivot", bag);
      bag.throwIfAny();
      vars.pivot = body.pivot;
    }
  },
};

/** GraphQL variables of an operation, from the route's path ids, the query string and the body. */
export function variablesOf(
  op: Operation,
  params: Record<string, number | string>,
  query: URLSearchParams,
  body: Body,
): Body {
  // Built from entries: an error bag's own keys would meet the very names refused.
  const refused = prototypeNamesIn(body, "");
  if (refused.length) throw validationError(Object.fromEntries(refused));
  const vars: Body = { ...params };
  variablesOfKind[op.kind](op, pivotOf(op), query, body, vars);
  return vars;
}

/** Kinds whose body may name includes besides the query string's (Orion's search body). */
export const bodyIncludes: Partial<Record<OperationKind, true>> = { search: true };

/** The methods a kind's route answers besides its own (PERSCOM updates with PUT too). */
export const alsoMethods: Partial<Record<OperationKind, string[]>> = { update: ["PUT"] };

/** The rows' selection and shaper (built only for answers that carry rows). */
type Rows = () => { selection: string; shape: Shaper };

interface Answer {
  /** The document's selection below the root field, and how each row is shaped. */
  selection(rows: Rows, op: Operation): { body: string; shape: Shaper | null };
  /** PERSCOM's response body for the GraphQL result. */
  envelope(op: Operation, result: unknown, shape: Shaper | null, url: URL): Record<string, unknown>;
  /** One record (`{data: {...}}`): v1 shows its statuses' colours. */
  single?: boolean;
}

const rowsAsThey = (rows: Rows) => {
  const built = rows();
  return { body: built.selection, shape: built.shape };
};
const page: Answer = {
  selection: (rows) => {
    const built = rows();
    return { body: `nodes { ${built.selection} } totalCount page perPage lastPage`, shape: built.shape };
  },
  envelope: (_op, result: PageResult, shape, url) =>
    paginated(shape ? result.nodes.map(shape) : result.nodes, result, url),
};
type Row = Record<string, unknown>;
const list: Answer = {
  selection: rowsAsThey,
  envelope: (_op, result: Row[], shape) => ({ data: shape ? result.map(shape) : result }),
};
const one: Answer = {
  selection: rowsAsThey,
  envelope: (_op, result: Row, shape) => ({ data: shape ? shape(result) : result }),
  single: true,
};

/** Each answer in REST. */
export const answers: Record<Returns, Answer> = {
  page,
  linkPage: page,
  objects: list,
  links: list,
  object: one,
  link: one,
  changes: {
    selection: () => ({ body: "attached detached updated", shape: null }),
    envelope: (op, result: Row) => Object.fromEntries(changesOf[op.kind as LinkKind].map((k) => [k, result[k]])),
  },
  status: { selection: () => ({ body: "status", shape: null }), envelope: (_op, result: Row) => result },
  // A command's answer (a new secret): its fields, snake_case, in `data`.
  result: {
    selection: (_rows, op) => ({ body: Object.keys(op.command!.answer!.fields).join(" "), shape: null }),
    envelope: (op, result: Row) => ({
      data: Object.fromEntries(Object.keys(op.command!.answer!.fields).map((k) => [snake(k), result[k]])),
    }),
  },
  feed: {
    selection: () => ({ body: FEED_SELECTION, shape: null }),
    envelope: (_op, result: FeedResult) => feedEnvelope(result),
  },
  publicForm: {
    selection: () => ({ body: publicFormSelection, shape: null }),
    envelope: (_op, result: Row) => ({ data: publicFormEnvelope(result) }),
  },
  publicSubmission: {
    selection: () => ({ body: SUBMISSION_SELECTION, shape: null }),
    envelope: (_op, result: Row) => ({ data: publicFormEnvelope(result) }),
  },
};

/** PERSCOM's response body for an operation's GraphQL result. */
export const envelope = (op: Operation, result: unknown, shape: Shaper | null, url: URL): Record<string, unknown> =>
  answers[op.returns].envelope(op, result, shape, url);
