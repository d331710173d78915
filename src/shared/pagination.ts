// page / per_page as DESIGN.md §3: page defaults to 1, per_page to 20, at most 100
// (more is a 422 from the query schema, see PageQuery in schemas.ts).
export interface PageWindow {
  page: number;
  perPage: number;
  offset: number;
}

export function pageWindow(query: { page?: number; per_page?: number }): PageWindow {
  const page = query.page ?? 1;
  const perPage = query.per_page ?? 20;
  return { page, perPage, offset: (page - 1) * perPage };
}

export function pageMeta(window: PageWindow, total: number) {
  return {
    current_page: window.page,
    per_page: window.perPage,
    total,
    last_page: Math.max(1, Math.ceil(total / window.perPage)),
  };
}
