import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { evalArgs } from "../support/eval-cli.js";
import { citingTablebenchTeam } from "../support/privacy-team.js";
import { lastMessage } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/** Through the sample's three questions the scripted coder knows (positions 18, 24 and 25). */
const LIMIT = 26;
const KNOWN = ["10.6", "4", "6"];

interface Result {
  prediction: string;
  error: string | null;
  score: { score: number };
}

describe("the scripted TableBench sample under each privacy mode", () => {
  let stub: StubServer;
  const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-privacy-eval-"));

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: citingTablebenchTeam, idleTimeoutMs: 300_000 });
  });
  afterAll(async () => {
    await stub?.close();
  });

  for (const mode of ["values", "schema"] as const) {
    it(`runs with --privacy ${mode}: every question answered, none of its tables' rows sent`, async () => {
      const out = path.join(runs, mode);
      const before = stub.requests.length;
      const run = await runCli(
        evalArgs(out, LIMIT, ["--privacy", mode, "--concurrency", "2", "--quiet"]),
        stubEnv(stub.url),
        240_000,
      );
      expect(run.code, run.stderr).toBe(0);
      const results = readFileSync(path.join(out, "results.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Result);
      expect(results).toHaveLength(LIMIT);
      expect(results.filter((r) => r.error !== null)).toEqual([]);
      expect(results.filter((r) => /^unknown$/i.test(r.prediction.trim()))).toEqual([]);
      // The questions the script can answer are still answered right: a result the model could
      // not see was cited by its id and filled in here.
      const right = results.filter((r) => r.score.score === 1).map((r) => r.prediction);
      expect(right.sort()).toEqual([...KNOWN].sort());
      const planners = stub.requests.slice(before).filter((r) => r.role === "planner");
      expect(planners.length).toBeGreaterThanOrEqual(LIMIT - 6);
      for (const req of planners) {
        const prompt = lastMessage(req);
        expect(prompt).toContain(`Privacy (${mode})`);
        expect(prompt).not.toMatch(/^(?:All \d+ rows|First rows|\| )/m);
      }
    }, 300_000);
  }
});
