import { type ChildProcess, spawn } from "node:child_process";
import { BIN, ROOT } from "./cli.js";
import { freePort } from "./dev-server.js";

/** A `tableminds serve` replica in a process of its own, stopped (or killed) by the test. */
export interface ReplicaProcess {
  url: string;
  child: ChildProcess;
  log(): string;
  /** SIGTERM, then SIGKILL after 10 s; resolves when the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL at once: the replica dies in the middle of whatever it does. */
  kill(): Promise<void>;
}

export async function startReplica(
  env: Record<string, string | undefined>,
  args: string[] = [],
): Promise<ReplicaProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--host", "127.0.0.1", "--port", String(port), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, LANGSMITH_TRACING: "false", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!output.includes("serve: the LangGraph API on")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`tableminds serve did not start:\n${output.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    url,
    child,
    log: () => output,
    async stop() {
      if (gone()) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (gone()) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}
