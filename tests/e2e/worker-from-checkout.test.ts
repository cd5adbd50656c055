import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtCheckoutCopy } from "../support/checkout-copy.js";
import { ROOT, runCli as runRepoCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The worker docs/adding-a-worker.md writes, added as one file in a folder outside the clone
 * (no node_modules beside it, nothing installed, nothing built by hand), run from the clone's
 * own command: its `tableminds/workers` import resolves, its answer is checked and passes.
 * The clone is a copy of this one, built as `npm run setup` builds it, so that the build of the
 * repository itself, which other tests run, is left alone.
 */

const TABLE = path.join(EXAMPLES, "olympics_2020_medals.csv");
const QUESTION = "How many nations are listed?";
const FIXTURE = path.join(ROOT, "tests/fixtures/workers/rowcount.ts");

let dir = "";
let clone = "";
/** What the clone's checkout build says when it runs, so a fall back to the sources shows. */
const BUILT = "ran the checkout build";

const runCli = (args: string[], env: Record<string, string | undefined>) =>
  runRepoCli(args, env, 60_000, path.join(clone, "cli/bin.js"));

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-workers-"));
  copyFileSync(FIXTURE, path.join(dir, "rowcount.ts"));
  // What `npm run setup` leaves in a clone: the checkout build the command starts from.
  clone = builtCheckoutCopy(BUILT);
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(clone, { recursive: true, force: true });
});

describe("a worker added in one file, run from a checkout", () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: (req) =>
        req.role === "decomposer"
          ? JSON.stringify({
              subtasks: [
                {
                  id: "s1",
                  task: QUESTION,
                  workers: ["rowcount"],
                  dependsOn: [],
                  args: { table: "olympics_2020_medals" },
                },
              ],
            })
          : { status: 500, content: `unscripted ${req.role}` },
    });
  });

  afterAll(async () => {
    await stub?.close();
  });

  it.each([
    ["its checkout build", {}, true],
    ["its sources", { TABLEMINDS_FROM_SOURCES: "1" }, false],
  ])("loads, answers and passes the check, the command running %s", async (_, env, built) => {
    const result = await runCli(
      ["ask", TABLE, QUESTION, "--graph", "orchestrator", "--workers-dir", dir, "--json"],
      { ...stubEnv(stub.url), ...env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.includes(BUILT)).toBe(built);
    expect(result.stderr).not.toMatch(/Cannot find|could not be loaded/);
    expect(result.stderr).toMatch(/^worker\s+s1\.rowcount answered 10 \(score 1\.00\)$/m);
    const out = JSON.parse(result.stdout) as {
      answer: { final: string };
      verdict: { pass: boolean };
      attempts: { id: string; code: string }[];
    };
    expect(out.answer.final).toBe("10");
    expect(out.verdict.pass).toBe(true);
    expect(out.attempts.map((a) => a.id)).toContain("s1.rowcount.q1");
  });

  it("ends not sure when the worker states the answer without the query behind it", async () => {
    const bare = path.join(dir, "bare");
    mkdirSync(bare);
    const source = readFileSync(FIXTURE, "utf8").replace(
      "return { ...counted,",
      "return { answer: counted.answer, evidence: [],",
    );
    expect(source).toContain("evidence: []");
    writeFileSync(path.join(bare, "rowcount.ts"), source);
    const result = await runCli(
      ["ask", TABLE, QUESTION, "--graph", "orchestrator", "--workers-dir", bare, "--json"],
      stubEnv(stub.url),
    );
    expect(result.stderr).toMatch(/^worker\s+s1\.rowcount answered 10/m);
    const out = JSON.parse(result.stdout) as { verdict: { pass: boolean } };
    expect(out.verdict.pass).toBe(false);
    expect(result.code).toBe(3);
  });

  it("tells the planner which args the worker requires", async () => {
    const before = stub.requests.length;
    await runCli(
      ["ask", TABLE, QUESTION, "--graph", "orchestrator", "--workers-dir", dir],
      stubEnv(stub.url),
    );
    const decomposer = stub.requests.slice(before).find((r) => r.role === "decomposer");
    const system = String(decomposer?.messages[0]?.content ?? "");
    expect(system).toContain(
      "- rowcount: Counts the rows of one table, exactly. Give it `table`, the table's name. Required args: table (string: the table to count).",
    );
  });
});
