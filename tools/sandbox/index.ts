import { LocalSandbox } from "./local.js";
import type { Sandbox } from "./types.js";

export {
  LocalSandbox,
  type LocalSandboxOptions,
  WarmWorker,
  type WorkerOutcome,
  type WorkerRequest,
} from "./local.js";
export { findPython, type PythonInfo, PythonNotFoundError } from "./python.js";
export { type ExecRequest, ExecRequestSchema, type Sandbox, type SandboxInfo } from "./types.js";

let sharedLocal: Promise<LocalSandbox> | undefined;

/** The process-wide sandbox of a backend, started on first use and shared by every caller. */
export async function getSandbox(kind: "local"): Promise<Sandbox> {
  if (kind !== "local") throw new Error(`unknown sandbox backend: ${String(kind)}`);
  if (!sharedLocal) {
    const starting = LocalSandbox.start();
    sharedLocal = starting;
    // A failed start is not kept: the next caller tries again.
    starting.catch(() => {
      if (sharedLocal === starting) sharedLocal = undefined;
    });
  }
  return sharedLocal;
}

/** Closes the shared sandboxes; the next getSandbox starts fresh ones. */
export async function closeSandboxes(): Promise<void> {
  const starting = sharedLocal;
  sharedLocal = undefined;
  if (!starting) return;
  const sandbox = await starting.catch(() => undefined);
  await sandbox?.close();
}
