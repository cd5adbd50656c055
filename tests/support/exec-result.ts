import type { ExecResult } from "../../blackboard/schemas.js";

/** A run of generated code that went well and printed nothing, with `fields` changed. */
export function execResult(fields: Partial<ExecResult> = {}): ExecResult {
  return {
    ok: true,
    stdout: "",
    stderr: "",
    error: null,
    tables: [],
    spans: [],
    truncated: false,
    durationMs: 1,
    result: null,
    ...fields,
  };
}
