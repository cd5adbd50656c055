import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import { stratifiedSample } from "../../evals/selection.js";
import { runCli, startCli } from "../support/cli.js";
import { freePort } from "../support/dev-server.js";
import { stubEnv } from "../support/env.js";
import { evalArgs, SAMPLE } from "../support/eval-cli.js";
import { startLangSmithCapture } from "../support/langsmith-capture.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

const LIMIT = 10;

function ids(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { id: string }).id);
}

function scores(dir: string): Map<string, number> {
  const lines = readFileSync(path.join(dir, "results.jsonl"), "utf8").split("\n").filter(Boolean);
  return new Map(
    lines.map((l) => {
      const r = JSON.parse(l) as { id: string; score: { score: number } };
      return [r.id, r.score.score];
    }),
  );
}

const runInfo = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, "run.json"), "utf8")) as Record<string, unknown>;

describe("tableminds eval", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-cli-"));

  beforeAll(async () => {
    // Slow enough that a run can be stopped in the middle.
    stub = await startStubOpenAI({
      respond: tablebenchTeam,
      latencyMs: 60,
      idleTimeoutMs: 300_000,
    });
    env = stubEnv(stub.url);
  });
  afterAll(async () => {
    await stub?.close();
  });

  const args = (out: string, extra: string[] = []) => [
    ...evalArgs(out, LIMIT),
    "--concurrency",
    "2",
    ...extra,
  ];

  /** Starts a run and sends `signal` once `results` lines are written. */
  async function stopAfter(out: string, results: number, signal: NodeJS.Signals) {
    const running = startCli(args(out), env);
    let seen = 0;
    let sent = false;
    running.child.stderr?.on("data", (chunk: Buffer) => {
      seen += (String(chunk).match(/^\[\d+\/\d+\]/gm) ?? []).length;
      if (seen >= results && !sent) {
        sent = true;
        running.child.kill(signal);
      }
    });
    return running.done;
  }

  it("resumes after kill -9 without losing or repeating a question", async () => {
    const out = path.join(runs, "killed");
    const killed = await stopAfter(out, 3, "SIGKILL");
    expect(killed.signal).toBe("SIGKILL");
    const before = ids(path.join(out, "results.jsonl"));
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(before.length).toBeLessThan(LIMIT);
    // run.json is written when a run starts, so a killed run can be reported on.
    expect(runInfo(out)).toMatchObject({ dataset: "tablebench", graph: "table_qa", limit: LIMIT });
    expect(runInfo(out).command).toEqual(expect.arrayContaining(["--limit", String(LIMIT)]));
    // The configuration holds what the flags gave; the defaults are left to the schema.
    expect(runInfo(out).context).toEqual({ maxReflections: 0, memory: false });
    const partial = await runCli(["eval", "report", out], env);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stderr).toContain(`has results for ${before.length} of its ${LIMIT} questions`);
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain(
      `Results for ${before.length} of ${LIMIT} questions so far.`,
    );

    const resumed = await runCli(args(out), env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `${LIMIT - before.length} to run, ${before.length} already done`,
    );
    const after = ids(path.join(out, "results.jsonl"));
    expect(after).toHaveLength(LIMIT);
    expect(new Set(after).size).toBe(LIMIT);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(resumed.stdout).toMatch(/^tablebench: overall \d+\.\d\d over 10 questions/m);
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain("over 10 questions");
    expect(runInfo(out)).toMatchObject({ invocations: 2, finished: expect.any(String) });
    // The second question's table has a header of two rows: how it was read goes to the run's
    // log, not into the progress lines.
    for (const run of [killed, resumed]) expect(run.stderr).not.toContain("as paths");
    expect(readFileSync(path.join(out, "warnings.log"), "utf8")).toMatch(
      /tableminds: warning: <inline>: table \S+ read as an analyst would: a header of 2 rows as paths \("League \/ Apps"\), 6 total rows left out/,
    );
  });

  it("detects a torn last line, moves it aside and runs that question again", async () => {
    const out = path.join(runs, "killed");
    const file = path.join(out, "results.jsonl");
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    const lastId = (JSON.parse(lines.at(-1) ?? "{}") as { id: string }).id;
    // What a crash in the middle of a write leaves: the last record cut short.
    writeFileSync(file, `${lines.slice(0, -1).join("\n")}\n${(lines.at(-1) ?? "").slice(0, 40)}`);
    const repaired = await runCli(args(out), env);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stderr).toMatch(/1 torn line\(s\) in results\.jsonl moved to .*corrupt-/);
    expect(repaired.stderr).toContain("1 to run, 9 already done");
    const after = ids(file);
    expect(after).toHaveLength(LIMIT);
    expect(after.at(-1)).toBe(lastId);
    expect(readdirSync(out).some((f) => f.startsWith("results.jsonl.corrupt-"))).toBe(true);
  });

  it("stops cleanly on Ctrl-C with exit code 130 and a whole file", async () => {
    const out = path.join(runs, "interrupted");
    const stopped = await stopAfter(out, 2, "SIGINT");
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain("stopping");
    const lines = readFileSync(path.join(out, "results.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThan(LIMIT);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // The summary so far is printed and the report written.
    expect(stopped.stdout).toContain(`over ${lines.length} questions`);
    expect(stopped.stderr).toContain(
      `interrupted with ${LIMIT - lines.length} of ${LIMIT} questions left`,
    );
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain(
      `Results for ${lines.length} of ${LIMIT} questions so far.`,
    );
    expect(runInfo(out).finished).toBeNull();
  });

  it("scores predictions made elsewhere and compares them with a run", async () => {
    const predictions = path.join(runs, "predictions.jsonl");
    const sample = readFileSync(SAMPLE, "utf8").split("\n").filter(Boolean).slice(0, 4);
    const rows = sample.map((l) => JSON.parse(l) as { id: string; answer: string });
    writeFileSync(
      predictions,
      rows
        .map((r, i) =>
          JSON.stringify({ id: r.id, prediction: i < 2 ? `Final Answer: ${r.answer}` : "no idea" }),
        )
        .join("\n"),
    );
    const other = path.join(runs, "other-system");
    const scored = await runCli(
      [
        "eval",
        "score",
        predictions,
        "--dataset",
        "tablebench",
        "--data",
        SAMPLE,
        "--json",
        "--out",
        other,
      ],
      env,
    );
    expect(scored.code, scored.stderr).toBe(0);
    const summary = JSON.parse(scored.stdout) as { n: number; parseRate: number };
    expect(summary.n).toBe(4);
    expect(summary.parseRate).toBe(50);
    // Its own gold answer scores full marks; "no idea" nothing.
    expect([...scores(other).values()]).toEqual([1, 1, 0, 0]);
    expect(readFileSync(path.join(other, "report.md"), "utf8")).toContain("over 4 questions");

    // Compared with the killed-and-resumed run on the questions both answered.
    const mine = scores(path.join(runs, "killed"));
    let better = 0;
    let worse = 0;
    let equal = 0;
    for (const [id, theirs] of scores(other)) {
      const own = mine.get(id);
      if (own === undefined) continue;
      if (own > theirs) better += 1;
      else if (own < theirs) worse += 1;
      else equal += 1;
    }
    expect(better + worse + equal).toBe(4);
    const compared = await runCli(["eval", "compare", other, path.join(runs, "killed")], env);
    expect(compared.code, compared.stderr).toBe(0);
    expect(compared.stdout).toContain(
      `On the 4 questions both answered, killed is better on ${better}, worse on ${worse}, equal on ${equal}.`,
    );
    expect(compared.stdout).toMatch(
      /^\| DataAnalysis \| \d+\.\d\d \| \d+\.\d\d \| [+-]\d+\.\d\d \|$/m,
    );
    expect(readFileSync(path.join(runs, "killed", "compare.md"), "utf8")).toBe(compared.stdout);

    appendFileSync(predictions, '\n{"id": "not-a-question", "prediction": "x"}');
    const unknown = await runCli(
      ["eval", "score", predictions, "--dataset", "tablebench", "--data", SAMPLE],
      env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("predictions.jsonl:5: id not-a-question is not in tablebench");
  });
});

describe("tableminds eval run directories keep one configuration", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-config-"));

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: tablebenchTeam, idleTimeoutMs: 300_000 });
    env = stubEnv(stub.url);
  });
  afterAll(async () => {
    await stub?.close();
  });

  it("refuses another model or a smaller --limit unless allowed, and reports every result", async () => {
    const out = path.join(runs, "four");
    const first = await runCli(evalArgs(out, 4), env);
    expect(first.code, first.stderr).toBe(0);
    expect(runInfo(out).config).toMatchObject({
      model: "stub-model",
      endpoint: new URL(stub.url).host,
      graph: "table_qa",
      selection: { kind: "first", n: 4 },
      settings: { maxReflections: 0, memory: false, temperature: 0 },
    });
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain(
      `Run: graph table_qa, model stub-model at ${new URL(stub.url).host}, questions: first 4.`,
    );

    const otherModel = await runCli([...evalArgs(out, 4), "--model", "other-model"], env);
    expect(otherModel.code).toBe(1);
    expect(otherModel.stderr.trim()).toBe(
      `tableminds: ${out} holds results of another configuration (model: "stub-model" -> "other-model"); use another --out directory, or --allow-config-change to go on and record the change`,
    );
    const fewer = await runCli(evalArgs(out, 2), env);
    expect(fewer.code).toBe(1);
    expect(fewer.stderr).toContain("(selection: first 4 -> first 2)");

    const allowed = await runCli([...evalArgs(out, 2), "--allow-config-change"], env);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain("0 to run, 2 already done");
    // The report still covers the four results in the directory.
    expect(allowed.stdout).toMatch(/^tablebench: overall \d+\.\d\d over 4 questions/m);
    expect(runInfo(out).configChanges).toEqual([
      // Refused invocations are not counted: this is the second that ran.
      { invocation: 2, at: expect.any(String), changes: ["selection: first 4 -> first 2"] },
    ]);
    const again = await runCli(["eval", "report", out], env);
    expect(again.stdout).toMatch(/over 4 questions/);
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain(
      "The configuration changed at invocation 2 (--allow-config-change; 0 results since): selection: first 4 -> first 2.",
    );
  }, 120_000); // five CLI runs

  it("samples questions across subtypes with --sample and --seed, and says so", async () => {
    const out = path.join(runs, "sample");
    const args = [
      "eval",
      "--dataset",
      "tablebench",
      "--data",
      SAMPLE,
      "--sample",
      "5",
      "--seed",
      "3",
      "--out",
      out,
      "--max-reflections",
      "0",
    ];
    const result = await runCli(args, env);
    expect(result.code, result.stderr).toBe(0);
    const expected = stratifiedSample(await loadDataset("tablebench", { path: SAMPLE }), 5, 3);
    expect(ids(path.join(out, "results.jsonl")).sort()).toEqual(expected.map((e) => e.id).sort());
    expect(new Set(expected.map((e) => e.subcategory)).size).toBe(5);
    expect(runInfo(out)).toMatchObject({ selection: { kind: "sample", n: 5, seed: 3 } });
    expect(readFileSync(path.join(out, "report.md"), "utf8")).toContain(
      "questions: sample 5 seed 3.",
    );
  });
});

describe("tableminds eval with the model endpoint down", () => {
  it("records nothing, stops after 3 failed questions with exit 1, and a later run does them all", async () => {
    const port = await freePort();
    const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-down-"));
    const args = [...evalArgs(out, 4), "--concurrency", "1", "--llm-retries", "0"];
    const home = stubEnv("http://unused").TABLEMINDS_HOME;
    const downEnv = {
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: "test-key",
      TABLEMINDS_MODEL: "stub-model",
      TABLEMINDS_HOME: home,
    };
    const started = performance.now();
    const down = await runCli(args, downEnv);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      new RegExp(
        `^eval: stopped: 3 questions in a row failed on the model endpoint 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; 4 of 4 questions left, the same command runs them once the endpoint works$`,
        "m",
      ),
    );
    expect(readFileSync(path.join(out, "results.jsonl"), "utf8")).toBe("");
    expect(runInfo(out)).toMatchObject({ finished: null, stopped: { reason: expect.any(String) } });

    const stub = await startStubOpenAI({ respond: tablebenchTeam });
    try {
      const up = await runCli(args, { ...downEnv, OPENAI_BASE_URL: stub.url });
      expect(up.code, up.stderr).toBe(0);
      expect(up.stderr).toContain("4 to run, 0 already done");
      expect(ids(path.join(out, "results.jsonl"))).toHaveLength(4);
      expect(runInfo(out)).toMatchObject({ stopped: null, finished: expect.any(String) });
    } finally {
      await stub.close();
    }
    // The second question's table warned in both runs: one line, with the question's id.
    const league = readFileSync(path.join(out, "warnings.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"League / Apps"'));
    const [, second] = await loadDataset("tablebench", { path: SAMPLE, limit: 2 });
    expect(league).toHaveLength(1);
    expect(league[0]).toContain(`[${second?.id}] tableminds: warning: <inline>: table table read`);
  });
});

describe("tableminds eval arguments", () => {
  it("lists every dataset in the help and refuses an unknown one", async () => {
    const help = await runCli(["eval", "run", "--help"], {});
    expect(help.stdout).toMatch(/"tablebench",\s+"wikitq",\s+"tabfact",\s+"finqa"/);
    const unknown = await runCli(["eval", "--dataset", "nope"], {});
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      "option '-d, --dataset <name>' argument 'nope' is invalid. Allowed choices are tablebench, wikitq, tabfact, finqa",
    );
  });

  it("takes --limit or --sample, and --seed only with --sample", async () => {
    const both = await runCli(
      ["eval", "--dataset", "tablebench", "--limit", "2", "--sample", "2"],
      {},
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain(
      "option '-n, --limit <n>' cannot be used with option '--sample <n>'",
    );
    const seedOnly = await runCli(["eval", "--dataset", "tablebench", "--seed", "2"], {});
    expect(seedOnly.code).toBe(1);
    expect(seedOnly.stderr).toContain(
      "--seed chooses the questions of --sample; give --sample N too",
    );
  });
});

describe("tableminds eval with LANGSMITH_API_KEY", () => {
  const args = (out: string) => evalArgs(out, 2);

  it("records a finished run as an experiment on the LangSmith endpoint", async () => {
    const stub = await startStubOpenAI({ respond: tablebenchTeam });
    const capture = await startLangSmithCapture();
    try {
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-ls-"));
      const result = await runCli(args(out), {
        ...stubEnv(stub.url),
        LANGSMITH_API_KEY: "test",
        LANGSMITH_ENDPOINT: capture.url,
        LANGSMITH_TRACING: undefined,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/recorded in LangSmith as experiment/);
      const posted = (p: string) =>
        capture.requests.filter((r) => r.method === "POST" && r.path === p);
      expect(posted("/datasets")[0]?.body).toMatchObject({ name: "tableminds-tablebench" });
      const upload = capture.requests.find(
        (r) => r.method === "POST" && /\/datasets\/[^/]+\/examples$/.test(r.path),
      );
      for (const id of ids(path.join(out, "results.jsonl"))) {
        expect(String(upload?.body)).toContain(`"id":"${id}"`);
      }
      expect(posted("/runs")).toHaveLength(2);
      expect(posted("/feedback")).toHaveLength(2);
      expect(posted("/sessions")).toHaveLength(1);
    } finally {
      await capture.close();
      await stub.close();
    }
  });

  it("warns and keeps the local results when LangSmith cannot be reached", async () => {
    const stub = await startStubOpenAI({ respond: tablebenchTeam });
    const port = await freePort();
    try {
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-ls-down-"));
      const result = await runCli(args(out), {
        ...stubEnv(stub.url),
        LANGSMITH_API_KEY: "test",
        LANGSMITH_ENDPOINT: `http://127.0.0.1:${port}`,
        LANGSMITH_TRACING: undefined,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        `could not record the run in LangSmith (LangSmith at http://127.0.0.1:${port} cannot be reached (ECONNREFUSED)); the local results are complete`,
      );
      expect(ids(path.join(out, "results.jsonl"))).toHaveLength(2);
      expect(result.stdout).toMatch(/over 2 questions/);
    } finally {
      await stub.close();
    }
  });
});
