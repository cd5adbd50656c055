/**
 * The local pool's scheduler: a fixed number of slots, each holding one warm worker
 * (started lazily, restarted when lost), and one queue of tasks handed to free slots,
 * preferring the slot whose worker already has the task's tables.
 */
import os from "node:os";

/** What the scheduler needs of a worker. */
export interface PoolWorker {
  readonly alive: boolean;
  readonly pid: number | undefined;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** A task's hold on one slot, for as long as the task runs. */
export interface Lease<W extends PoolWorker> {
  /** The slot's worker, started (or restarted) if need be. */
  worker(): Promise<W>;
  /** The worker was lost: the slot forgets it and warms a replacement. */
  lost(worker: W): void;
}

/** A place for one warm worker; the pool is several slots sharing one queue. */
interface Slot<W> {
  worker?: W;
  starting?: Promise<W>;
  busy: boolean;
  /** Tables (by sha256) this slot's worker has loaded, so tasks go where their tables are. */
  loaded: Set<string>;
  idleSince: number;
}

interface Queued<W extends PoolWorker> {
  tables: readonly string[];
  start(lease: Lease<W>): Promise<void>;
  reject(error: unknown): void;
}

/** How many cores this process may use. */
export function defaultWorkerCount(): number {
  return Math.max(
    1,
    typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length,
  );
}

/** Among free slots, the one whose worker has most of the tables, then the longest idle. */
function chooseSlot<W>(free: Slot<W>[], tables: readonly string[]): Slot<W> | undefined {
  let best: Slot<W> | undefined;
  let bestLoaded = -1;
  for (const slot of free) {
    const loaded = tables.filter((sha256) => slot.loaded.has(sha256)).length;
    if (loaded > bestLoaded || (loaded === bestLoaded && best && slot.idleSince < best.idleSince)) {
      best = slot;
      bestLoaded = loaded;
    }
  }
  return best;
}

export class LocalSandboxClosedError extends Error {
  override name = "LocalSandboxClosedError";
  constructor(message = "the local sandbox is closed") {
    super(message);
  }
}

export class WorkerPool<W extends PoolWorker> {
  private readonly slots: Slot<W>[];
  private readonly queue: Queued<W>[] = [];
  private closed = false;

  constructor(
    count: number,
    private readonly startWorker: () => Promise<W>,
  ) {
    if (!Number.isInteger(count) || count < 1) {
      throw new Error(`workers must be a positive integer, got ${count}`);
    }
    this.slots = Array.from({ length: count }, () => ({
      busy: false,
      loaded: new Set<string>(),
      idleSince: 0,
    }));
  }

  get size(): number {
    return this.slots.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Process ids of the live workers. */
  get pids(): number[] {
    return this.slots.flatMap((slot) =>
      slot.worker?.alive && slot.worker.pid !== undefined ? [slot.worker.pid] : [],
    );
  }

  /** Starts every slot's worker; rejects when one cannot start. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.workerFor(slot)));
  }

  /** The first slot's worker, started if need be (for what every worker can tell). */
  anyWorker(): Promise<W> {
    return this.workerFor(this.slots[0] as Slot<W>);
  }

  /**
   * Runs `task` once a slot is free, with that slot to itself. `tables` (sha256s) are
   * the tables the task will give its worker, so that the next task with them goes there.
   */
  schedule<T>(tables: readonly string[], task: (lease: Lease<W>) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new LocalSandboxClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        tables,
        start: (lease) => task(lease).then(resolve, reject),
        reject,
      });
      this.pump();
    });
  }

  /** Rejects the queued tasks and stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      job.reject(new LocalSandboxClosedError("the local sandbox was closed"));
    }
    await Promise.all(
      this.slots.map(async (slot) => {
        await slot.starting?.catch(() => undefined);
        await slot.worker?.stop();
        slot.worker = undefined;
      }),
    );
  }

  private lease(slot: Slot<W>, tables: readonly string[]): Lease<W> {
    return {
      worker: async () => {
        const worker = await this.workerFor(slot);
        for (const sha256 of tables) slot.loaded.add(sha256);
        return worker;
      },
      lost: (worker) => {
        if (slot.worker === worker) slot.worker = undefined;
        // Warm the replacement now; a failure shows up on the next task.
        if (!this.closed) this.workerFor(slot).catch(() => undefined);
      },
    };
  }

  private workerFor(slot: Slot<W>): Promise<W> {
    if (this.closed) return Promise.reject(new LocalSandboxClosedError());
    if (slot.worker?.alive) return Promise.resolve(slot.worker);
    if (!slot.starting) {
      slot.loaded.clear();
      const starting = this.startWorker().then(async (worker) => {
        if (this.closed) {
          await worker.kill();
          throw new LocalSandboxClosedError();
        }
        slot.worker = worker;
        return worker;
      });
      slot.starting = starting;
      const forget = () => {
        if (slot.starting === starting) slot.starting = undefined;
      };
      starting.then(forget, forget);
    }
    return slot.starting;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const free = this.slots.filter((slot) => !slot.busy);
      const job = this.queue[0];
      const slot = job && chooseSlot(free, job.tables);
      if (!job || !slot) return;
      this.queue.shift();
      slot.busy = true;
      void job.start(this.lease(slot, job.tables)).finally(() => {
        slot.busy = false;
        slot.idleSince = performance.now();
        this.pump();
      });
    }
  }
}
