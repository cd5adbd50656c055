import type { ExecResult, TableRef } from "../../blackboard/schemas.js";
import type { Sandbox } from "../../sandbox/index.js";
import { WorkCache } from "../../storage/bounded-cache.js";

/** What a run printed, and its error as `Type: message` after it when it failed. */
export function outputText(result: ExecResult): string {
  const error = result.error ? `${result.error.type}: ${result.error.message}` : "";
  return [result.stdout, error].filter(Boolean).join("\n");
}

/** The released code's test: some output, and no "Error" anywhere in it. */
export function executesByOutput(output: string): number {
  return output.trim() !== "" && !output.includes("Error") ? 1 : 0;
}

/** Runs `code` on `tables` in the sandbox. */
export function run(code: string, tables: TableRef[], sandbox: Sandbox): Promise<ExecResult> {
  return sandbox.execute({ code, tables });
}

const referenceRuns = new WorkCache<ExecResult>(512);

/** Like run, cached per code and tables: for the pseudo-gold code, scored against many times. */
export function runReference(
  code: string,
  tables: TableRef[],
  sandbox: Sandbox,
): Promise<ExecResult> {
  const key = JSON.stringify([code, tables.map((t) => [t.name, t.sha256])]);
  return referenceRuns.obtain(key, () => run(code, tables, sandbox));
}
