import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/* `serve-reward` as a process: starts, serves, and on SIGTERM lets a running request finish. */

const root = path.join(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "reward-server-cli-"));
let child: ChildProcess | undefined;

afterAll(() => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("tableminds serve-reward", () => {
  it("serves until SIGTERM, then finishes the running request and exits 0", async () => {
    const tokenFile = path.join(dir, "token");
    writeFileSync(tokenFile, "cli-token\n");
    const args = ["--port", "0", "--token-file", tokenFile, "--preset", "paper"];
    child = spawn(process.execPath, [path.join(root, "cli/bin.js"), "serve-reward", ...args], {
      cwd: root,
      env: { ...process.env, TABLEMINDS_HOME: path.join(dir, "home") },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    const url = await new Promise<string>((resolve, reject) => {
      child?.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = stderr.match(/on (http:\/\/\S+) /);
        if (found?.[1]) resolve(found[1]);
      });
      child?.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child?.once("exit", resolve));

    const health = await fetch(`${url}/health`);
    expect(await health.json()).toMatchObject({
      ok: true,
      preset: "paper",
      concurrency: { plan: 16, code: 4, answer: 16 },
    });

    // A sample refused for its tables is logged on stderr, where the operator sees it.
    const refused = await fetch(`${url}/reward/code`, {
      method: "POST",
      headers: { authorization: "Bearer cli-token", "content-type": "application/json" },
      body: JSON.stringify({
        query: ["```python\nprint(1)\n```"],
        labels: [
          JSON.stringify({
            reference: "print(1)",
            tables: [{ name: "t", uri: "/etc/passwd", sha256: "e".repeat(64) }],
          }),
        ],
      }),
    });
    expect(await refused.json()).toMatchObject({ rewards: [0] });
    // stderr and the reply travel apart: wait (bounded) for the line to come through.
    const logged =
      /serve-reward: refused labels\[0\]\.tables\[0\]\.uri: "\/etc\/passwd" is not a table/;
    for (let k = 0; k < 250 && !logged.test(stderr); k++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stderr).toMatch(logged);

    const running = fetch(`${url}/reward/code`, {
      method: "POST",
      headers: { authorization: "Bearer cli-token", "content-type": "application/json" },
      body: JSON.stringify({
        query: ["```python\nimport time\ntime.sleep(0.5)\nprint(6)\n```"],
        labels: ['{"reference": "print(6)"}'],
      }),
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill("SIGTERM");
    const reply = await running;
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { rewards: number[] };
    expect(body.rewards[0]).toBeGreaterThan(0.5);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/SIGTERM, finishing running requests/);
  }, 60_000);
});
