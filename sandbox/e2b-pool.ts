/** How a pool makes and gets rid of its members. */
export interface PoolHooks<T> {
  open(): Promise<T>;
  /** Must settle (it is given its own deadline by the caller); a rejection is recorded. */
  dispose(item: T): Promise<void>;
}

export class PoolClosedError extends Error {
  override name = "PoolClosedError";
  constructor() {
    super("the E2B sandbox is closed");
  }
}

/**
 * At most `size` members, each lent to one user at a time. A member comes back with
 * `release` (kept for the next user) or `discard` (disposed of); a user that finds
 * every member lent waits for one. Members are opened lazily, only when no idle one
 * is left, so the pool never holds more than `size`.
 */
export class SandboxPool<T> {
  private readonly idle: T[] = [];
  private readonly lent = new Set<T>();
  private readonly waiting: { resolve(): void; reject(error: Error): void }[] = [];
  private readonly opening = new Set<Promise<unknown>>();
  private readonly disposing = new Set<Promise<void>>();
  private readonly failures: unknown[] = [];
  private permitsTaken = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly hooks: PoolHooks<T>,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`pool size must be >= 1, not ${size}`);
  }

  /** Every member, idle or lent. */
  get members(): T[] {
    return [...this.idle, ...this.lent];
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async acquire(): Promise<T> {
    if (this.closed) throw new PoolClosedError();
    await this.takePermit();
    try {
      const reused = this.idle.pop();
      if (reused !== undefined) {
        this.lent.add(reused);
        return reused;
      }
      const opening = this.hooks.open();
      this.opening.add(opening);
      let opened: T;
      try {
        opened = await opening;
      } finally {
        this.opening.delete(opening);
      }
      if (this.closed) {
        await this.dispose(opened);
        throw new PoolClosedError();
      }
      this.lent.add(opened);
      return opened;
    } catch (error) {
      this.returnPermit();
      throw error;
    }
  }

  /** Gives a member back for reuse. */
  release(item: T): void {
    if (!this.lent.delete(item)) return;
    if (this.closed) {
      void this.dispose(item);
      return;
    }
    this.idle.push(item);
    this.returnPermit();
  }

  /** Takes a member out of the pool and disposes of it in the background. */
  discard(item: T): void {
    if (!this.lent.delete(item)) return;
    void this.dispose(item);
    if (!this.closed) this.returnPermit();
  }

  /**
   * Disposes of every member, in parallel, and waits for members still being opened
   * (they are disposed of as they arrive). Never throws: returns what failed, including
   * earlier background disposals. A second call returns at once with nothing.
   */
  async close(): Promise<unknown[]> {
    if (this.closed) return [];
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new PoolClosedError());
    const members = [...this.idle.splice(0), ...this.lent];
    this.lent.clear();
    await Promise.all(members.map((item) => this.dispose(item)));
    await Promise.allSettled([...this.opening]);
    await Promise.allSettled([...this.disposing]);
    return this.failures.splice(0);
  }

  private dispose(item: T): Promise<void> {
    const disposal = this.hooks.dispose(item).catch((error: unknown) => {
      this.failures.push(error);
    });
    this.disposing.add(disposal);
    void disposal.finally(() => this.disposing.delete(disposal));
    return disposal;
  }

  private takePermit(): Promise<void> {
    if (this.permitsTaken < this.size) {
      this.permitsTaken += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Hands the permit to the next waiter, if any. */
  private returnPermit(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.permitsTaken -= 1;
  }
}
