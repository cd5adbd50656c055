import { afterAll, beforeAll } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { type InterpreterResult, WarmInterpreter } from "../../sandbox/local.js";

/**
 * A warm interpreter whose children run without Landlock (the audit hook and seccomp alone), started
 * before the suite's tests and stopped after them; `execute` runs code in it and returns the
 * interpreter's result. `python` and `scratchRoot` are read when the suite starts.
 */
export function useInterpreterWithoutLandlock(
  prefix: string,
  python: () => string,
  scratchRoot: () => string,
) {
  let interpreter: WarmInterpreter | undefined;
  let counter = 0;

  beforeAll(async () => {
    interpreter = await WarmInterpreter.start(python(), {
      scratchRoot: scratchRoot(),
      landlock: false,
    });
  });

  afterAll(async () => {
    await interpreter?.stop();
  });

  return {
    interpreter: (): WarmInterpreter => {
      if (!interpreter) throw new Error("the interpreter has not started");
      return interpreter;
    },
    async execute(code: string, tables: TableRef[] = []): Promise<InterpreterResult> {
      counter += 1;
      const outcome = await (interpreter as WarmInterpreter).run(
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
      if (outcome.kind !== "result") throw new Error(`interpreter lost: ${outcome.error.message}`);
      return outcome.result;
    },
  };
}
