import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/*
 * The real services of the scaled route for a test file, started and stopped by the project's
 * own script (scripts/services.sh) in a folder of their own, on free loopback ports. A test that
 * needs one fails when it cannot start: these tests are never skipped.
 */

const script = fileURLToPath(new URL("../../scripts/services.sh", import.meta.url));

export type ServiceName = "postgres" | "redis" | "s3";

export interface Service {
  /**
   * The settings that reach it: TABLEMINDS_DATABASE_URL, TABLEMINDS_QUEUE_URL with a fresh
   * TABLEMINDS_QUEUE_KEY, or the S3 ones.
   */
  env: Record<string, string>;
  dir: string;
  stop(): void;
  /** A fast restart (PostgreSQL only): every connection is dropped; resolves once it is back. */
  restart(): Promise<void>;
  /** Down for `seconds`, refusing connections, then back (PostgreSQL only). */
  outage(seconds: number): Promise<void>;
}

const running = new Set<Service>();
process.once("exit", () => {
  for (const service of running) service.stop();
});

export function startService(name: ServiceName): Service {
  const dir = mkdtempSync(path.join(os.tmpdir(), `tableminds-${name}-`));
  let output: string;
  try {
    output = execFileSync("bash", [script, "start", name, dir], {
      encoding: "utf8",
      timeout: 60_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start ${name} with scripts/services.sh: ${stderr.trim()}`);
  }
  const env = Object.fromEntries(
    output
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  // Submitters and consumers of a queue share its key.
  if (name === "redis") env.TABLEMINDS_QUEUE_KEY = randomBytes(24).toString("hex");
  const service: Service = {
    env,
    dir,
    async restart() {
      if (name !== "postgres") throw new Error(`only postgres restarts, not ${name}`);
      await execFileAsync("bash", [script, "restart", name, dir], { timeout: 60_000 });
    },
    async outage(seconds) {
      if (name !== "postgres") throw new Error(`only postgres goes down, not ${name}`);
      await execFileAsync("bash", [script, "outage", name, dir, String(seconds)], {
        timeout: 60_000 + seconds * 1000,
      });
    },
    stop() {
      if (!running.delete(service)) return;
      try {
        execFileSync("bash", [script, "stop", name, dir], { stdio: "ignore", timeout: 30_000 });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  running.add(service);
  return service;
}
