import { afterAll, beforeAll } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { WarmWorker, type WorkerResult } from "../../sandbox/local.js";

/**
 * A warm worker whose children run without Landlock (the audit hook and seccomp alone), started
 * before the suite's tests and stopped after them; `execute` runs code in it and returns the
 * worker's result. `python` and `scratchRoot` are read when the suite starts.
 */
export function useWorkerWithoutLandlock(
  prefix: string,
  python: () => string,
  scratchRoot: () => string,
) {
  let worker: WarmWorker | undefined;
  let counter = 0;

  beforeAll(async () => {
    worker = await WarmWorker.start(python(), { scratchRoot: scratchRoot(), landlock: false });
  });

  afterAll(async () => {
    await worker?.stop();
  });

  return {
    worker: (): WarmWorker => {
      if (!worker) throw new Error("the worker has not started");
      return worker;
    },
    async execute(code: string, tables: TableRef[] = []): Promise<WorkerResult> {
      counter += 1;
      const outcome = await (worker as WarmWorker).run(
        {
          id: `${prefix}-${counter}`,
          code,
          tables: tables.map(({ name, uri, sha256 }) => ({ name, uri, sha256 })),
          timeout_ms: 15_000,
          output_bytes: 65_536,
          memory_mb: 1024,
        },
        { loadMs: 60_000, runMs: 20_000 },
      );
      if (outcome.kind !== "result") throw new Error(`worker lost: ${outcome.error.message}`);
      return outcome.result;
    },
  };
}
