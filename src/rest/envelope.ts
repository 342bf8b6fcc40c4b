import type { Operation } from "../resources/operations.ts";
import type { Shaper } from "./selection.ts";
import { feedEnvelope } from "./changes.ts";
import { changesOf, type LinkKind } from "../graphql/kinds/links.ts";

interface PageResult {
  nodes: Record<string, any>[];
  totalCount: number;
  page: number;
  perPage: number;
  lastPage: number;
}

/** PERSCOM's response body for an operation's GraphQL result. */
export function envelope(op: Operation, result: any, shape: Shaper | null, url: URL): Record<string, unknown> {
  const each = (rows: Record<string, any>[]) => (shape ? rows.map(shape) : rows);
  switch (op.returns) {
    case "page":
    case "linkPage":
      return paginated(each((result as PageResult).nodes), result as PageResult, url);
    case "changes":
      return Object.fromEntries(changesOf[op.kind as LinkKind].map((k) => [k, result[k]]));
    case "status":
      return result;
    case "feed":
      return feedEnvelope(result);
    case "links":
    case "objects":
      return { data: each(result) };
    default:
      return { data: shape ? shape(result) : result };
  }
}

function paginated(data: unknown[], page: PageResult, url: URL) {
  const path = `${url.origin}${url.pathname}`;
  const linkTo = (n: number) => {
    const params = new URLSearchParams();
    for (const key of ["include", "limit"]) {
      const value = url.searchParams.get(key);
      if (value !== null) params.set(key, value);
    }
    params.set("page", String(n));
    return `${path}?${params}`;
  };
  const from = data.length ? (page.page - 1) * page.perPage + 1 : null;
  return {
    data,
    links: {
      first: linkTo(1),
      last: linkTo(page.lastPage),
      prev: page.page > 1 ? linkTo(page.page - 1) : null,
      next: page.page < page.lastPage ? linkTo(page.page + 1) : null,
    },
    meta: {
      current_page: page.page,
      from,
      last_page: page.lastPage,
      path,
      per_page: page.perPage,
      to: from === null ? null : from + data.length - 1,
      total: page.totalCount,
    },
  };
}
