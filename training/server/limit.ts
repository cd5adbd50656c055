/** At most `size` tasks run at once; the rest wait in order. */
export class Limiter {
  private running = 0;
  private highest = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`concurrency must be >= 1: ${size}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
      this.highest = Math.max(this.highest, this.running);
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` stays the same.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** The most tasks that ever ran at once. */
  get peak(): number {
    return this.highest;
  }
}
