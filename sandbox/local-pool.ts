/**
 * The local pool's scheduler: a fixed number of slots, each holding one warm interpreter
 * (started lazily, restarted when lost), and one queue of tasks handed to free slots,
 * preferring the slot whose interpreter already has the task's tables.
 */
import os from "node:os";

/** What the scheduler needs of an interpreter. */
export interface PoolInterpreter {
  readonly alive: boolean;
  readonly pid: number | undefined;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** A task's hold on one slot, for as long as the task runs. */
export interface Lease<W extends PoolInterpreter> {
  /** The slot's interpreter, started (or restarted) if need be. */
  interpreter(): Promise<W>;
  /** The interpreter was lost: the slot forgets it and warms a replacement. */
  lost(interpreter: W): void;
}

/** A place for one warm interpreter; the pool is several slots sharing one queue. */
interface Slot<W> {
  interpreter?: W;
  starting?: Promise<W>;
  busy: boolean;
  /** Tables (by sha256) this slot's interpreter has loaded, so tasks go where their tables are. */
  loaded: Set<string>;
  idleSince: number;
}

interface Queued<W extends PoolInterpreter> {
  tables: readonly string[];
  start(lease: Lease<W>): Promise<void>;
  reject(error: unknown): void;
}

/** How many cores this process may use. */
export function defaultInterpreterCount(): number {
  return Math.max(
    1,
    typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length,
  );
}

/** Among free slots, the one whose interpreter has most of the tables, then the longest idle. */
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

export class InterpreterPool<W extends PoolInterpreter> {
  private readonly slots: Slot<W>[];
  private readonly queue: Queued<W>[] = [];
  private closed = false;

  constructor(
    count: number,
    private readonly startInterpreter: () => Promise<W>,
  ) {
    if (!Number.isInteger(count) || count < 1) {
      throw new Error(`interpreters must be a positive integer, got ${count}`);
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

  /** Process ids of the live interpreters. */
  get pids(): number[] {
    return this.slots.flatMap((slot) =>
      slot.interpreter?.alive && slot.interpreter.pid !== undefined ? [slot.interpreter.pid] : [],
    );
  }

  /** Starts every slot's interpreter; rejects when one cannot start. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.interpreterFor(slot)));
  }

  /** The first slot's interpreter, started if need be (for what every interpreter can tell). */
  anyInterpreter(): Promise<W> {
    return this.interpreterFor(this.slots[0] as Slot<W>);
  }

  /**
   * Runs `task` once a slot is free, with that slot to itself. `tables` (sha256s) are
   * the tables the task will give its interpreter, so that the next task with them goes there.
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

  /** Rejects the queued tasks and stops every interpreter. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      job.reject(new LocalSandboxClosedError("the local sandbox was closed"));
    }
    await Promise.all(
      this.slots.map(async (slot) => {
        await slot.starting?.catch(() => undefined);
        await slot.interpreter?.stop();
        slot.interpreter = undefined;
      }),
    );
  }

  private lease(slot: Slot<W>, tables: readonly string[]): Lease<W> {
    return {
      interpreter: async () => {
        const interpreter = await this.interpreterFor(slot);
        for (const sha256 of tables) slot.loaded.add(sha256);
        return interpreter;
      },
      lost: (interpreter) => {
        if (slot.interpreter === interpreter) slot.interpreter = undefined;
        // Warm the replacement now; a failure shows up on the next task.
        if (!this.closed) this.interpreterFor(slot).catch(() => undefined);
      },
    };
  }

  private interpreterFor(slot: Slot<W>): Promise<W> {
    if (this.closed) return Promise.reject(new LocalSandboxClosedError());
    if (slot.interpreter?.alive) return Promise.resolve(slot.interpreter);
    if (!slot.starting) {
      slot.loaded.clear();
      const starting = this.startInterpreter().then(async (interpreter) => {
        if (this.closed) {
          await interpreter.kill();
          throw new LocalSandboxClosedError();
        }
        slot.interpreter = interpreter;
        return interpreter;
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
