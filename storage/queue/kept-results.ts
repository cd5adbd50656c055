import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { tablemindsHome } from "../../settings/operator.js";

/*
 * Results a consumer computed, kept on its disk until the queue has them. A consumer whose
 * Redis went away while it finished a job cannot hand the result over; the job comes back
 * (stalled, or from Redis's append-only file) and would be computed again. Kept here, the
 * result is handed over as soon as the job is taken again on this machine: a question asked
 * once is answered once. A result is dropped once the queue has recorded it, and anything kept
 * longer than a week (its job ended elsewhere) when a consumer starts.
 */

const KeptSchema = z.object({ job: z.string(), data: z.string(), result: z.unknown() });

const WEEK_MS = 7 * 24 * 3600_000;

/** The job's data, as a digest: a job given again under its id with other data is not served. */
function digestOf(data: unknown): string {
  return createHash("sha256").update(JSON.stringify(data)).digest("hex");
}

export class KeptResults {
  constructor(private readonly dir: string) {}

  private file(jobId: string): string {
    return path.join(this.dir, `${createHash("sha256").update(jobId).digest("hex")}.json`);
  }

  /** The result kept for this job and these data, if any. */
  get(jobId: string, data: unknown): unknown {
    try {
      const kept = KeptSchema.parse(JSON.parse(readFileSync(this.file(jobId), "utf8")));
      return kept.job === jobId && kept.data === digestOf(data) ? kept.result : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps a result before it is handed over (written whole or not at all). */
  async put(jobId: string, data: unknown, result: unknown): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.file(jobId);
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify({ job: jobId, data: digestOf(data), result }), {
      mode: 0o600,
    });
    renameSync(temporary, file);
  }

  /** The queue has the job's result: nothing to keep. */
  drop(jobId: string): void {
    rmSync(this.file(jobId), { force: true });
  }

  /** Removes what was kept longer than `olderThanMs`; returns how many. */
  prune(olderThanMs = WEEK_MS, now = Date.now()): number {
    let removed = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      const file = path.join(this.dir, name);
      try {
        if (now - statSync(file).mtimeMs > olderThanMs) {
          rmSync(file, { force: true });
          removed += 1;
        }
      } catch {
        // Gone meanwhile.
      }
    }
    return removed;
  }
}

/** This machine's kept results: `$TABLEMINDS_HOME/queue-results`. */
export function keptResults(): KeptResults {
  return new KeptResults(path.join(tablemindsHome(), "queue-results"));
}
