/**
 * Cursor pagination as the OpenAI and Anthropic admin APIs have it: a page is
 * `{data, has_more, first_id, last_id}`, the next one starts `after_id` the last id, the previous one
 * ends `before_id` the first. A store fetches `limit + 1` rows in ascending order (the extra row,
 * which tells whether there is more, is the last one after a cursor and the first one before it).
 */

export interface PageRequest {
  limit: number;
  afterId?: string | undefined;
  beforeId?: string | undefined;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** A page from `limit + 1` ascending rows fetched for `request`. */
export function pageOf<T extends { id: string }>(rows: readonly T[], request: PageRequest): Page<T> {
  const more = rows.length > request.limit;
  const data = more ? (request.beforeId !== undefined ? rows.slice(1) : rows.slice(0, request.limit)) : [...rows];
  return { data, has_more: more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/**
 * A page of `table`'s rows in `seq` order (the column every paged table keeps), `limit + 1` rows
 * fetched as {@link pageOf} wants; undefined for a cursor id the table does not hold. `filter` adds
 * `AND …` conditions with their arguments.
 */
export function seqPage<R extends Record<string, SqlStorageValue>, T extends { id: string }>(
  sql: SqlStorage,
  table: string,
  request: PageRequest,
  map: (row: R) => T,
  filter: { where: string; args: SqlStorageValue[] } = { where: "", args: [] },
): Page<T> | undefined {
  const cursorId = request.beforeId ?? request.afterId;
  const cursor =
    cursorId === undefined
      ? 0
      : sql.exec<{ seq: number }>(`SELECT seq FROM ${table} WHERE id = ?`, cursorId).toArray()[0]?.seq;
  if (cursor === undefined) return undefined;
  const before = request.beforeId !== undefined;
  const rows = sql
    .exec<R>(
      `SELECT * FROM ${table} WHERE seq ${before ? "<" : ">"} ? ${filter.where} ORDER BY seq ${before ? "DESC" : "ASC"} LIMIT ?`,
      cursor,
      ...filter.args,
      request.limit + 1,
    )
    .toArray()
    .map(map);
  if (before) rows.reverse();
  return pageOf(rows, request);
}
