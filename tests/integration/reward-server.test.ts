import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { scoreReward } from "../../training/rewards/index.js";
import {
  type RewardServer,
  startRewardServer,
  writeVerlModule,
} from "../../training/server/index.js";
import { useTempHome } from "../support/env.js";

/* The reward server on loopback: OpenRLHF's contract, auth, limits, load, and the verl module. */

const TOKEN = "test-token-0123456789";
const BODY_LIMIT = 64 * 1024;
const CONCURRENCY = 4;
const home = useTempHome();
let server: RewardServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "reward-server-"));
  server = await startRewardServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    preset: "release",
    concurrency: { plan: CONCURRENCY, code: CONCURRENCY, answer: CONCURRENCY },
    bodyLimitBytes: BODY_LIMIT,
    sandbox: await getSandbox("local"),
    prefixMismatch: "reject",
  });
});

afterAll(async () => {
  await server?.close();
  await closeSandboxes();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const post = (route: string, body: unknown, token: string | null = TOKEN) =>
  fetch(`${server.url}${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

interface Reply {
  rewards: number[];
  scores: number[];
  extra_logs: Record<string, number[]>;
  error: string;
}
const read = async (res: Response) => (await res.json()) as Partial<Reply>;

const PLAN_REFERENCE =
  "<plan>\n1. Filter rows where year > 2000.\n2. Sum the sales column.\n</plan>";
const PLAN_REPLY = "<plan>\n1. Filter rows where year > 2000.\n2. Add up the sales.\n</plan>";
const ANSWER_REPLY = "The total is 0.52.\nFinal Answer: 0.52";
const block = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

describe("rewards", () => {
  it("GET /health says ok and the preset, with no token", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await read(res)).toMatchObject({ ok: true, preset: "release" });
  });

  it("scores a plan and an answer in one batch as scoreReward does", async () => {
    const prompts = ["<|user|>plan this<|assistant|>", "<|user|>answer this<|assistant|>"];
    const labels = [
      JSON.stringify({ role: "plan", reference: PLAN_REFERENCE }),
      JSON.stringify({
        role: "answer",
        reference: "0.5",
        qtype: "DataAnalysis",
        qsubtype: "CorrelationAnalysis",
      }),
    ];
    const res = await post("/reward", {
      query: [prompts[0] + PLAN_REPLY, prompts[1] + ANSWER_REPLY],
      prompts,
      labels,
    });
    expect(res.status).toBe(200);
    const body = await read(res);
    const plan = await scoreReward("release", "plan", {
      response: PLAN_REPLY,
      reference: PLAN_REFERENCE,
    });
    const answer = await scoreReward("release", "answer", {
      response: ANSWER_REPLY,
      reference: "0.5",
      qtype: "DataAnalysis",
      qsubtype: "CorrelationAnalysis",
    });
    expect(plan.reward).toBeGreaterThan(0.1);
    expect(plan.reward).toBeLessThan(1);
    expect(body.rewards).toEqual([plan.reward, answer.reward]);
    expect(body.scores).toEqual(body.rewards);
    expect(body.extra_logs?.plan_bleu).toEqual([plan.parts.bleu, 0]);
  });

  it("takes the role from the route, the preset from the label, and a single sample", async () => {
    const res = await post("/reward/answer", {
      query: "Final Answer: 12",
      labels: JSON.stringify({ reference: "12", preset: "paper" }),
    });
    expect(await read(res)).toMatchObject({ rewards: [1], scores: [1] });
  });

  it("scores a code reply by running both programs in the sandbox", async () => {
    const response = block("x = 2 * 3\nprint(x)");
    const label = { role: "code", reference: "print(6)" };
    const res = await post("/reward", { query: [response], labels: [JSON.stringify(label)] });
    const body = await read(res);
    const direct = await scoreReward("release", "code", { response, reference: "print(6)" });
    expect(body.rewards).toEqual([direct.reward]);
    expect(direct.parts.executes).toBe(0.2);
    expect(direct.parts.output).toBe(0.5);
  });
});

describe("bad requests", () => {
  const ok = { query: ["Final Answer: 1"], labels: ['{"role":"answer","reference":"1"}'] };

  it("401 without a token or with a wrong one; ?token= is accepted", async () => {
    const missing = await post("/reward", ok, null);
    expect(missing.status).toBe(401);
    expect(await read(missing)).toEqual({ error: "missing bearer token" });
    const wrong = await post("/reward/answer", ok, "not-the-token");
    expect(wrong.status).toBe(401);
    expect(await read(wrong)).toEqual({ error: "wrong bearer token" });
    const query = await post(`/reward?token=${TOKEN}`, ok, null);
    expect(query.status).toBe(200);
  });

  it("413 on a body over the limit", async () => {
    const big = { ...ok, query: ["x".repeat(BODY_LIMIT + 10)] };
    const res = await post("/reward", big);
    expect(res.status).toBe(413);
    expect((await read(res)).error).toMatch(/body larger than 65536 bytes/);
  });

  it.each([
    ["malformed JSON", "/reward", '{"query": [', /not valid JSON/],
    [
      "mismatched lengths",
      "/reward",
      { ...ok, labels: [...ok.labels, ...ok.labels] },
      /labels has 2 items but query has 1/,
    ],
    ["mismatched prompts", "/reward", { ...ok, prompts: ["a", "b"] }, /prompts has 2 items/],
    ["an unknown role route", "/reward/poem", ok, /unknown role poem/],
    [
      "an unknown role label",
      "/reward",
      { ...ok, labels: ['{"role":"poem","reference":"1"}'] },
      /labels\[0\]\.role/,
    ],
    [
      "an unknown preset",
      "/reward",
      { ...ok, labels: ['{"role":"answer","reference":"1","preset":"x"}'] },
      /labels\[0\]\.preset/,
    ],
    [
      "a label that is not JSON",
      "/reward",
      { ...ok, labels: ["1 is the answer"] },
      /labels\[0\] is not a JSON object/,
    ],
    ["a label without a role", "/reward", { ...ok, labels: ['{"reference":"1"}'] }, /no role/],
    [
      "a route and label that disagree",
      "/reward/plan",
      ok,
      /role is answer but the route is \/reward\/plan/,
    ],
    [
      "a query not starting with its prompt",
      "/reward",
      { ...ok, prompts: ["<s>"] },
      /query\[0\] does not start with prompts\[0\]/,
    ],
    ["no labels", "/reward", { query: ["a"] }, /labels/],
  ])("400 on %s", async (_name, route, body, message) => {
    const res = await post(route, body);
    expect(res.status).toBe(400);
    expect((await read(res)).error).toMatch(message);
  });

  it("404 as JSON on an unknown path", async () => {
    const res = await post("/score", ok);
    expect(res.status).toBe(404);
    expect((await read(res)).error).toMatch(/no route POST \/score/);
  });
});

describe("load", () => {
  it("answers 200 requests from 16 clients with no error, at most the role's limit at once", async () => {
    const total = 200;
    let next = 0;
    const failures: string[] = [];
    const client = async () => {
      while (next < total) {
        const i = next++;
        // Every 20th is a code reward, so some computations really overlap.
        const body =
          i % 20 === 0
            ? {
                query: [block(`print(${i})`)],
                labels: [`{"role":"code","reference":"print(${i})"}`],
              }
            : { query: [`Final Answer: ${i}`], labels: [`{"role":"answer","reference":"${i}"}`] };
        const res = await post("/reward", body);
        const json = await read(res);
        if (res.status !== 200 || json.rewards?.[0] !== 1) failures.push(`${i}: ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    expect(failures).toEqual([]);
    for (const limiter of Object.values(server.limiters)) {
      expect(limiter.peak).toBeLessThanOrEqual(CONCURRENCY);
      expect(limiter.active).toBe(0);
    }
  }, 120_000);
});

describe("the verl reward module", () => {
  it("calls the server from python3 with only the standard library", async () => {
    const file = path.join(dir, "tableminds_reward.py");
    await writeVerlModule(file);
    const script = [
      "import importlib.util, json, sys",
      "spec = importlib.util.spec_from_file_location('m', sys.argv[1])",
      "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)",
      `label = json.dumps({'role': 'plan', 'reference': ${JSON.stringify(PLAN_REFERENCE)}})`,
      `one = m.compute_score('tablebench', ${JSON.stringify(PLAN_REPLY)}, label)`,
      "infos = [{'role': 'answer'}, {'role': 'answer', 'preset': 'paper'}]",
      "answers = [m.compute_score('tablebench', reply, '3', info)",
      "    for reply, info in zip(['Final Answer: 3', 'Final Answer: 4'], infos)]",
      "try:",
      "    m.compute_score('tablebench', 'x', '{\"reference\": \"1\"}')",
      "    err = None",
      "except RuntimeError as e:",
      "    err = str(e)",
      "missing = json.dumps({'role': 'code', 'reference': 'print(1)', 'tables': [{'name': 't', 'sha256': 'f' * 64}]})",
      "refused = m.compute_score('tablebench', '```python\\nprint(1)\\n```', missing)",
      "print(json.dumps({'one': one, 'answers': answers, 'err': err, 'refused': refused}))",
    ].join("\n");
    const { stdout, stderr } = await promisify(execFile)("python3", ["-c", script, file], {
      env: {
        PATH: process.env.PATH ?? "",
        TABLEMINDS_REWARD_URL: server.url,
        TABLEMINDS_REWARD_TOKEN: TOKEN,
        TABLEMINDS_REWARD_TIMEOUT: "30",
      },
    });
    const out = JSON.parse(stdout);
    const plan = await scoreReward("release", "plan", {
      response: PLAN_REPLY,
      reference: PLAN_REFERENCE,
    });
    expect(out.one).toBe(plan.reward);
    // A plain ground truth is the reference; extra_info gives the role and the preset.
    expect(out.answers).toEqual([1, 0.1]);
    expect(out.err).toMatch(/reward server 400: .*no role/);
    // A sample refused for its tables scores 0, and the module says why.
    expect(out.refused).toBe(0);
    expect(stderr).toContain(
      `tableminds reward: refused labels[0].tables[0]: no table with sha256 ${"f".repeat(64)}`,
    );
  });

  it("writes the server URL it is given as the default", async () => {
    const file = path.join(dir, "with_url.py");
    await writeVerlModule(file, "http://10.0.0.5:8000");
    const { stdout } = await promisify(execFile)("python3", [
      "-c",
      "import importlib.util,sys;s=importlib.util.spec_from_file_location('m',sys.argv[1]);m=importlib.util.module_from_spec(s);s.loader.exec_module(m);print(m.DEFAULT_URL)",
      file,
    ]);
    expect(stdout.trim()).toBe("http://10.0.0.5:8000");
  });
});
