import { z } from "zod";
import type { ExecResult, TableRef } from "../../blackboard/schemas.js";

export const ExecRequestSchema = z.object({
  code: z.string(),
  /** Tables given to the code: `df` when there is one, and each by its name. */
  tables: z.array(z.custom<TableRef>()),
  timeoutMs: z.number().int().positive().default(10_000),
  memoryMb: z.number().int().positive().default(2048),
  outputBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024),
});
export type ExecRequest = z.input<typeof ExecRequestSchema>;

/** What a backend can tell about its own protections, for `tableminds doctor`. */
export interface SandboxInfo {
  backend: string;
  runtime: string;
  protections: Record<string, boolean>;
}

/** Every code-running backend (local pool, E2B, ...) implements this. */
export interface Sandbox {
  execute(request: ExecRequest): Promise<ExecResult>;
  info(): Promise<SandboxInfo>;
  close(): Promise<void>;
}
