import type { GraphNode } from "@langchain/langgraph";
import type { Attempt, ExecResult } from "../blackboard/schemas.js";
import type { SolveState } from "../blackboard/state.js";
import { evidenceFromExecution } from "../grounding/evidence.js";
import { getSandbox } from "../sandbox/index.js";
import { failedResult } from "../sandbox/results.js";
import { emit } from "./events.js";
import { configurationOf, type NodeContext } from "./runtime.js";

function unparsedResult(attempt: Attempt): ExecResult {
  const message = attempt.parseError ?? "no code to run";
  return failedResult({ type: "NoCode", message, line: null }, 0);
}

/** An error as one line: its type and message. */
function failure(result: ExecResult): string {
  return result.error ? `${result.error.type}: ${result.error.message}` : "the code failed";
}

/** Runs the newest attempt in the sandbox and posts its output and tables as evidence. */
export const executor = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const attempt = state.attempts.at(-1);
  if (!attempt) throw new Error("executor: there is no code attempt to run");
  if (attempt.parseError) {
    emit(runtime, { event: "attempt-failed", attempt: attempt.id, error: attempt.parseError });
    return { attempts: [{ ...attempt, result: unparsedResult(attempt) }] };
  }
  emit(runtime, { event: "code", attempt: attempt.id, lines: attempt.code.split("\n").length });
  const started = performance.now();
  const sandbox = await getSandbox(config.sandbox);
  const result = await sandbox.execute({
    code: attempt.code,
    tables: state.tables,
    timeoutMs: config.execTimeoutMs,
    memoryMb: config.execMemoryMb,
    outputBytes: config.outputBytes,
  });
  // The whole call, scratch setup and artifact storage included: all of it is sandbox time.
  const execMs = performance.now() - started;
  const evidence = evidenceFromExecution(attempt, result, "executor", new Date().toISOString());
  if (!result.ok)
    emit(runtime, { event: "attempt-failed", attempt: attempt.id, error: failure(result) });
  if (evidence.length > 0) emit(runtime, { event: "evidence", ids: evidence.map((e) => e.id) });
  return {
    attempts: [{ ...attempt, result }],
    evidence,
    budget: { execMs },
  };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
