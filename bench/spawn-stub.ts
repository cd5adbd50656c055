import { spawn } from "node:child_process";
import path from "node:path";

export interface StubProcess {
  url: string;
  stop: () => void;
}

/** Starts bench/stub-process.ts in a child process and waits for its URL. */
export function spawnStub(latencyMs: number, team = "medals"): Promise<StubProcess> {
  const script = path.join(import.meta.dirname, "stub-process.ts");
  const tsx = path.join(import.meta.dirname, "../node_modules/.bin/tsx");
  const child = spawn(tsx, [script, String(latencyMs), team], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`stub process exited with ${code}`)));
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        child.removeAllListeners("exit");
        resolve({ url: line.trim(), stop: () => child.stdin.end() });
      }
    });
  });
}
