import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { putArtifact } from "../../storage/artifacts.js";
import { type VerlRow, VerlRowSchema } from "../../training/exports/rows.js";
import { scoreReward } from "../../training/rewards/index.js";
import {
  type RewardServer,
  startRewardServer,
  VERL_REWARD_FUNCTION,
  VERL_REWARD_MANAGER,
  verlModuleSource,
  verlRewardOverrides,
} from "../../training/server/index.js";
import { useTempHome } from "../support/env.js";
import {
  VERL_VERSION,
  type VerlFacts,
  verlFacts,
  verlReferencePython,
} from "../support/verl-reference.js";

/*
 * The generated verl module against verl 0.9.1 itself. verl is installed without its
 * dependencies (scripts/setup-tests.sh) and importing any of it needs torch, so its source is read
 * instead (tests/support/verl_reference.py): the keywords its naive reward manager passes
 * compute_score, its registry, the keys its reward setup reads and its config. The module is
 * then called with exactly those keywords, on rows as the exports write them, against a real
 * reward server.
 */

const ROOT = path.join(import.meta.dirname, "../..");
const TOKEN = "verl-token-0123456789";
const SUM = "print(df['x'].sum())";
const block = (code: string) => `\`\`\`python\n${code}\n\`\`\``;
const home = useTempHome();
let dir: string;
let python: string;
let facts: VerlFacts;
let server: RewardServer;
let table: Record<string, unknown>;

beforeAll(async () => {
  python = verlReferencePython();
  facts = verlFacts(python);
  dir = mkdtempSync(path.join(tmpdir(), "verl-reference-"));
  server = await startRewardServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    preset: "release",
    concurrency: { plan: 4, code: 4, answer: 4 },
    bodyLimitBytes: 256 * 1024,
    sandbox: await getSandbox("local"),
    prefixMismatch: "reject",
  });
  const stored = await putArtifact("x\n1\n2\n3\n", "csv");
  // A TableRef as the exports keep it in extra_info.tables.
  table = {
    id: "table:t",
    name: "t",
    uri: stored.uri,
    sha256: stored.sha256,
    rows: 3,
    columns: [{ name: "x", dtype: "int64" }],
  };
});

afterAll(async () => {
  await server?.close();
  await closeSandboxes();
  if (dir) rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** A row as training/exports writes it: the plain reference, the rest in extra_info. */
function row(role: "answer" | "code", reference: string, tables: unknown[]): VerlRow {
  return VerlRowSchema.parse({
    data_source: "tablebench",
    prompt: [{ role: "user", content: "How many?" }],
    ability: role === "code" ? "coding" : "answering",
    reward_model: { style: "rule", ground_truth: reference },
    extra_info: {
      split: "train",
      index: 0,
      question_id: "q1",
      branch: "b1",
      qtype: "NumericalReasoning",
      qsubtype: "Aggregation",
      question: "What is the sum of x?",
      answer: "6",
      tables: JSON.stringify(tables),
      role,
    },
  });
}

/**
 * The keyword arguments verl's naive manager passes for `row` and `response`: the names read
 * from its source, with extra_info as it hands it over (the row's, plus the keys it sets).
 */
function verlKeywords(
  verlRow: VerlRow,
  response: string,
  withRewardModel: boolean,
): Record<string, unknown> {
  const extraInfo: Record<string, unknown> = { ...verlRow.extra_info };
  for (const key of facts.call.extraInfoKeys) extraInfo[key] = null;
  const values: Record<string, unknown> = {
    data_source: verlRow.data_source,
    solution_str: response,
    ground_truth: verlRow.reward_model.ground_truth,
    extra_info: extraInfo,
    // Passed only when a reward model runs beside the trainer.
    reward_router_address: "127.0.0.1:1",
    reward_model_tokenizer: "a tokenizer",
  };
  const names = [...facts.call.keywords, ...(withRewardModel ? facts.call.extraKeywords : [])];
  const unknown = names.filter((name) => !(name in values));
  if (unknown.length)
    throw new Error(`verl passes keywords this test has no value for: ${unknown}`);
  return Object.fromEntries(names.map((name) => [name, values[name]]));
}

/** Calls the module's compute_score with each set of keywords, in one python process. */
async function callModule(
  file: string,
  calls: Record<string, unknown>[],
): Promise<{ scores: (number | null)[]; errors: (string | null)[]; stderr: string }> {
  const script = [
    "import importlib.util, json, sys",
    "spec = importlib.util.spec_from_file_location('m', sys.argv[1])",
    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)",
    `fn = getattr(m, ${JSON.stringify(VERL_REWARD_FUNCTION)})`,
    "scores, errors = [], []",
    "for kwargs in json.loads(sys.argv[2]):",
    "    try:",
    "        score = fn(**kwargs)",
    "        scores.append(score if type(score) is float else None); errors.append(None)",
    "    except Exception as e:",
    "        scores.append(None); errors.append(type(e).__name__ + ': ' + str(e))",
    "print(json.dumps({'scores': scores, 'errors': errors}))",
  ].join("\n");
  const { stdout, stderr } = await promisify(execFile)(
    python,
    ["-c", script, file, JSON.stringify(calls)],
    {
      env: {
        PATH: process.env.PATH ?? "",
        TABLEMINDS_REWARD_URL: server.url,
        TABLEMINDS_REWARD_TOKEN: TOKEN,
        TABLEMINDS_REWARD_TIMEOUT: "60",
      },
    },
  );
  return { ...JSON.parse(stdout), stderr };
}

/** What the server gives for one label sent by hand. */
async function served(response: string, label: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${server.url}/reward`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ query: [response], labels: [JSON.stringify(label)] }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rewards: number[] }).rewards[0] ?? Number.NaN;
}

describe(`verl ${VERL_VERSION}, read from its source`, () => {
  it("is the release the docs and the module follow", () => {
    expect(facts.version).toBe(VERL_VERSION);
  });

  it("registers the reward manager we recommend, and no batch manager", () => {
    expect(facts.registered).toMatchObject({ [VERL_REWARD_MANAGER]: `${VERL_REWARD_MANAGER}.py` });
    expect(Object.keys(facts.registered)).not.toContain("batch");
  });

  it("has every key of our overrides in its trainer config, and reads them under reward.", () => {
    const overrides = verlRewardOverrides("/x/tableminds_reward.py");
    for (const override of overrides) {
      const key = override.slice(0, override.indexOf("="));
      expect(Object.keys(facts.config), key).toContain(key);
    }
    // The manager's name is looked up in the registry read above.
    expect(facts.config["reward.reward_manager.source"]).toBe("register");
    // The reward setup reads the function and manager under reward., never the top-level key.
    expect(facts.reads).toEqual(
      expect.arrayContaining([
        "config.reward.custom_reward_function",
        "config.reward.reward_manager",
      ]),
    );
    expect(facts.reads.filter((key) => !key.startsWith("config.reward"))).toEqual([]);
  });

  it("calls compute_score by keyword, with extra keywords beside a reward model", () => {
    expect(facts.call.calls).toBeGreaterThan(0);
    expect(facts.call.keywords).toContain("solution_str");
    expect(facts.call.keywords).toContain("ground_truth");
    expect(facts.call.extraKeywords.length).toBeGreaterThan(0);
  });
});

describe("the module `serve-reward --write-verl` writes, called as verl's naive manager calls it", () => {
  it("scores right and wrong answers and code as the server does", async () => {
    // Written by the CLI, which prints the overrides that hand this file to verl.
    const { stderr } = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "cli/bin.js"), "serve-reward", "--write-verl", "tableminds_reward.py"],
      { cwd: dir, env: { ...process.env, TABLEMINDS_HOME: home } },
    );
    const file = path.join(dir, "tableminds_reward.py");
    expect(stderr).toContain(verlRewardOverrides(file).join(" "));
    expect(readFileSync(file, "utf8")).toBe(await verlModuleSource());
    const answer = row("answer", "6", []);
    const code = row("code", SUM, [table]);
    const samples: [VerlRow, string][] = [
      [answer, "Final Answer: 6"],
      [answer, "Final Answer: 7"],
      [code, block(SUM)],
      [code, block("print(df['x'].max())")],
    ];
    const calls = [false, true].flatMap((withRewardModel) =>
      samples.map(([r, response]) => verlKeywords(r, response, withRewardModel)),
    );
    // The extra keywords really are in the second half of the calls.
    expect(Object.keys(calls[samples.length] ?? {})).toEqual(
      expect.arrayContaining(facts.call.extraKeywords),
    );
    const { scores, errors } = await callModule(file, calls);
    expect(errors).toEqual(calls.map(() => null));
    const right = await scoreReward("release", "answer", {
      response: "Final Answer: 6",
      reference: "6",
    });
    const wrong = await scoreReward("release", "answer", {
      response: "Final Answer: 7",
      reference: "6",
    });
    expect(right.reward).toBe(1);
    expect(wrong.reward).toBeLessThan(right.reward);
    // The code label, sent by hand with the row's tables: what extra_info must carry over.
    const label = { role: "code", reference: SUM, tables: [table] };
    const codeRight = await served(block(SUM), label);
    const codeWrong = await served(block("print(df['x'].max())"), label);
    expect(codeWrong).toBeLessThan(codeRight);
    const expected = [right.reward, wrong.reward, codeRight, codeWrong];
    expect(scores).toEqual([...expected, ...expected]);
  }, 60_000);
});
