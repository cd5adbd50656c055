/**
 * The wire protocol between the local pool and interpreter.py: what the interpreter sends
 * (one JSON object per line on fd 3) and what it is sent (one per line on stdin).
 */
import { z } from "zod";
import { RunnerResultSchema } from "./results.js";
import type { KnownTrace } from "./trace-cache.js";

export const ReadyMessageSchema = z.object({
  type: z.literal("ready"),
  pid: z.number().int(),
  python: z.string(),
  pandas: z.string(),
  numpy: z.string(),
  /** The interpreter's own directory, under which each run gets its scratch directory. */
  scratch_root: z.string(),
  /** What the interpreter's probe child found to hold on this machine. */
  protections: z.record(z.string(), z.boolean()),
  details: z.record(z.string(), z.string()),
});

export const StartedMessageSchema = z.object({
  type: z.literal("started"),
  id: z.string(),
  pid: z.number().int().positive(),
});

/** A run's result (the same as runner.py's) in the interpreter's envelope. */
export const ResultMessageSchema = RunnerResultSchema.extend({
  type: z.literal("result"),
  /** Null when the interpreter could not read the request's id. */
  id: z.string().nullable(),
  /** Where the run's table files are; absent when the run left none. */
  scratch: z.string().optional(),
});

export const InterpreterMessageSchema = z.discriminatedUnion("type", [
  ReadyMessageSchema,
  StartedMessageSchema,
  ResultMessageSchema,
]);
export type InterpreterMessage = z.infer<typeof InterpreterMessageSchema>;

export type InterpreterReady = Omit<z.infer<typeof ReadyMessageSchema>, "type">;
export type InterpreterVersions = Pick<InterpreterReady, "python" | "pandas" | "numpy">;
export type InterpreterResult = z.infer<typeof ResultMessageSchema>;

/** One request as interpreter.py reads it (built here from a checked ExecRequest). */
export interface InterpreterRequest {
  id: string;
  code: string;
  tables: { name: string; uri: string; sha256: string; dates?: string[] }[];
  timeout_ms: number;
  output_bytes: number;
  memory_mb: number;
  /** Trace the result's derivation and lineage (interpreter.py's default: true). */
  lineage?: boolean;
  /** The largest table file the run may leave in scratch (interpreter.py's default: 64 MB). */
  table_bytes?: number;
  /** A trace made before for this code on these tables (trace-cache.ts). */
  known_trace?: KnownTrace;
}

/** The line that asks the interpreter to run a request. */
export function runLine(request: InterpreterRequest): string {
  return `${JSON.stringify({ type: "run", ...request })}\n`;
}

/** The line that tells the interpreter the table files of a finished run were read. */
export function releaseLine(scratch: string): string {
  return `${JSON.stringify({ type: "release", scratch })}\n`;
}

/** An interpreter's message, or undefined for a line that is not one. */
export function parseInterpreterLine(line: string): InterpreterMessage | undefined {
  try {
    return InterpreterMessageSchema.parse(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** The interpreter's own part of a result message, which it writes whatever the child sent. */
const ResultEnvelopeSchema = z.object({
  type: z.literal("result"),
  id: z.string().nullable(),
  scratch: z.string().optional(),
});

/**
 * A result message whose result does not match RunnerResultSchema, as a failed result of
 * its run. The interpreter checks of a child's result only what it relies on itself
 * (interpreter_protocol.py); the rest is validated here, and code that patched the runner to
 * send something else gets this error instead of the interpreter being given up for it.
 * `scratch`: the run's folder, which the interpreter keeps until it is told to release it.
 * Undefined for a line that is no result message at all, or a valid one.
 */
export function refusedResult(
  line: string,
): { result: InterpreterResult; scratch?: string } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  const envelope = ResultEnvelopeSchema.safeParse(raw);
  const checked = ResultMessageSchema.safeParse(raw);
  if (!envelope.success || checked.success) return undefined;
  const issue = checked.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join(".") : "the result";
  return {
    result: {
      type: "result",
      id: envelope.data.id,
      ok: false,
      stdout: "",
      stderr: "",
      error: {
        type: "ProtocolError",
        message: `the run's result was refused: ${where}: ${issue?.message ?? "not a result"}`,
        line: null,
      },
      spans: [],
      truncated: false,
      tables: [],
      result: null,
    },
    scratch: envelope.data.scratch,
  };
}

/** Cuts a byte stream, as it arrives in chunks, into complete non-empty lines. */
export class LineSplitter {
  private partial = "";

  push(chunk: string): string[] {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    return lines.filter((line) => line.trim() !== "");
  }
}
