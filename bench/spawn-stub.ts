import { spawn } from "node:child_process";
import path from "node:path";

export interface StubProcess {
  url: string;
  /** Stops the stub; resolves with the CPU time it used, in ms, when it reported one. */
  stop: () => Promise<number | null>;
}

/** Starts bench/stub-process.ts in a child process and waits for its URL. */
export function spawnStub(latencyMs: number, team = "medals"): Promise<StubProcess> {
  const script = path.join(import.meta.dirname, "stub-process.ts");
  const tsx = path.join(import.meta.dirname, "../node_modules/.bin/tsx");
  const child = spawn(tsx, [script, String(latencyMs), team], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  let stopping: Promise<number | null> | undefined;
  const stop = () =>
    (stopping ??= new Promise<number | null>((done) => {
      child.once("close", () => {
        const cpu = /stub-cpu-ms (\d+)/.exec(err)?.[1];
        const rest = err.replace(/stub-cpu-ms \d+\n?/, "");
        if (rest.trim()) process.stderr.write(rest);
        done(cpu === undefined ? null : Number(cpu));
      });
      child.stdin.end();
    }));
  return new Promise((resolve, reject) => {
    let out = "";
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`stub process exited with ${code}`)));
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        child.removeAllListeners("exit");
        resolve({ url: line.trim(), stop });
      }
    });
  });
}
