export interface PageResult {
  nodes: Record<string, unknown>[];
  totalCount: number;
  page: number;
  perPage: number;
  lastPage: number;
}

/** PERSCOM's page envelope: the rows, `links` to the other pages and `meta` (the page, its size, the total). */
export function paginated(data: unknown[], page: PageResult, url: URL) {
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
