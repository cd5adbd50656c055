/**
 * A map that keeps at most `limit` entries: reading an entry makes it the newest, and adding
 * one past the limit drops the one least recently used. For the per-process caches of loaded
 * tables, table profiles and model clients.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly limit: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    const oldest = this.entries.keys().next();
    if (this.entries.size > this.limit && !oldest.done) this.entries.delete(oldest.value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * A BoundedCache of work that settles later (a load, a profile, a run): each key's work starts
 * once and callers that ask meanwhile share it; work that fails is dropped, so the next caller
 * tries again.
 */
export class WorkCache<T> extends BoundedCache<Promise<T>> {
  obtain(key: string, work: () => Promise<T>): Promise<T> {
    const kept = this.get(key);
    if (kept) return kept;
    const started = work();
    this.set(key, started);
    started.catch(() => this.delete(key));
    return started;
  }
}
