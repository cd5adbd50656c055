import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { ROOT } from "./cli.js";

/** A free loopback port (the dev server's default, 2024, may be taken). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface DevServer {
  url: string;
  log: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts `langgraphjs dev` on 127.0.0.1 in its own process group, under a hard
 * lifetime limit (coreutils `timeout`) so it stops by itself even if a test dies.
 */
export async function startDevServer(
  env: Record<string, string | undefined>,
  lifetimeSeconds = 300,
): Promise<DevServer> {
  const port = await freePort();
  const cli = path.join(ROOT, "node_modules/.bin/langgraphjs");
  const child: ChildProcess = spawn(
    "timeout",
    [
      "-s",
      "KILL",
      String(lifetimeSeconds),
      cli,
      "dev",
      "--no-browser",
      "--no-reload",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", LANGSMITH_TRACING: "false", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${url}/info`);
      if (response.ok) return { url, log: () => output, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  await stop();
  throw new Error(`langgraph dev server did not start on ${url}:\n${output.slice(-3000)}`);
}
