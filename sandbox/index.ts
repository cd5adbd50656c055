import { LocalSandbox } from "./local.js";
import type { Sandbox } from "./types.js";

/** Types only: DuckDB's native module (~200 ms to load) and the E2B SDK load on first use. */
export type {
  DuckDbSqlOptions,
  SqlErrorKind,
  SqlQueryOptions,
  SqlResult,
} from "./duckdb.js";
export type { E2BSandboxOptions } from "./e2b.js";
export {
  type InterpreterOutcome,
  type InterpreterRequest,
  LocalSandbox,
  type LocalSandboxOptions,
  WarmInterpreter,
} from "./local.js";
export { findPython, type PythonInfo, PythonNotFoundError } from "./python.js";
export { type ExecRequest, ExecRequestSchema, type Sandbox, type SandboxInfo } from "./types.js";

export type SandboxKind = "local" | "e2b";

/** How each backend starts; E2B's SDK is only loaded when that backend is chosen. */
const STARTERS: Record<SandboxKind, () => Promise<Sandbox>> = {
  local: () => LocalSandbox.start(),
  e2b: async () => (await import("./e2b.js")).E2BSandbox.start(),
};

const shared = new Map<SandboxKind, Promise<Sandbox>>();

/** The process-wide sandbox of a backend, started on first use and shared by every caller. */
export async function getSandbox(kind: SandboxKind): Promise<Sandbox> {
  const start = STARTERS[kind];
  if (!start) throw new Error(`unknown sandbox backend: ${String(kind)} (known: local, e2b)`);
  let sandbox = shared.get(kind);
  if (!sandbox) {
    const starting = start();
    sandbox = starting;
    shared.set(kind, starting);
    // A failed start is not kept: the next caller tries again.
    starting.catch(() => {
      if (shared.get(kind) === starting) shared.delete(kind);
    });
  }
  return sandbox;
}

/** Closes the shared sandboxes; the next getSandbox starts fresh ones. */
export async function closeSandboxes(): Promise<void> {
  const starting = [...shared.values()];
  shared.clear();
  await Promise.all(
    starting.map(async (pending) => {
      const sandbox = await pending.catch(() => undefined);
      await sandbox?.close();
    }),
  );
}
