/** A page of a list: `?limit=` (1 to 200, default 50) and the opaque `?cursor=` of the previous page. */
export interface Page<T> {
  data: T[];
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
}

export interface ListParams {
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * Every item of a list, page after page:
 * `for await (const hook of paginate((cursor) => client.webhooks.list(appId, { cursor }))) …`.
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
