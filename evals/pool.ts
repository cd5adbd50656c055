/**
 * Runs `work` over `items` in order, at most `limit` at a time. Once `stop` is aborted or an
 * item fails, no further item starts; the returned promise settles only when every started
 * item has settled, and rejects with the first failure, if any.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  stop?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && !stop?.aborted && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const lanes = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failure) throw failure.error;
}
