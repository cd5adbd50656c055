/**
 * Reward server throughput and p99 latency at 16 concurrent clients (not a test), beside
 * calling scoreReward in-process with the same 16-way concurrency: answer rewards, plan rewards
 * (BLEU), then code rewards (sandbox runs; the pseudo-gold run is cached, each prediction
 * differs). The in-process rates are the rewards scored per second for each role.
 *
 * Then answer rewards under contention: 4 clients send answer rewards while 8 clients send
 * code rewards whose code sleeps 3 seconds, once with one limiter shared by every role (the
 * server before issue 22) and once with its per-role limiters; both p99s are printed.
 *
 *   npx tsx bench/reward-server.ts [answer and plan requests, default 4000]
 *     [code requests, default 300] [seconds of each contention run, default 30; 0 skips it]
 */
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import { type Role, scoreReward } from "../training/rewards/index.js";
import {
  DEFAULT_CONCURRENCY,
  Limiter,
  type RewardServer,
  startRewardServer,
} from "../training/server/index.js";

const CLIENTS = 16;
const TOKEN = "bench-token";
const answers = Number(process.argv[2] ?? 4000);
const codes = Number(process.argv[3] ?? 300);
const contentionSeconds = Number(process.argv[4] ?? 30);

interface Sample {
  role: Role;
  response: string;
  reference: string;
}

const answerSample = (i: number): Sample => ({
  role: "answer",
  response: `The answer is below.\nFinal Answer: ${i % 7 === 0 ? i + 1 : i}`,
  reference: String(i),
});
const planSample = (i: number): Sample => ({
  role: "plan",
  response: `<plan>\n1. Keep rows where year is ${i % 50}.\n2. Sum the gold column and print it.\n</plan>`,
  reference:
    "<plan>\n1. Keep rows where year is 2020.\n2. Sum the gold column and print it.\n</plan>",
});
const codeSample = (i: number): Sample => ({
  role: "code",
  response: `\`\`\`python\nx = ${i}\nprint(x * 2)\n\`\`\``,
  reference: "print(6)",
});

/** The p-th percentile of sorted latencies. */
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;

/** Runs `count` calls from CLIENTS loops; per-call latencies and the wall time, in ms. */
async function drive(count: number, call: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await call(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { perSecond: (1000 * count) / wall, p99: percentile(latencies, 0.99) };
}

const sandbox = await getSandbox("local");
const start = (limiters?: Parameters<typeof startRewardServer>[0]["limiters"]) =>
  startRewardServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    preset: "release",
    concurrency: { ...DEFAULT_CONCURRENCY, code: 4 },
    limiters,
    bodyLimitBytes: 1024 * 1024,
    sandbox,
    prefixMismatch: "reject",
  });
const server = await start();

async function viaServer(sample: Sample, at: RewardServer = server): Promise<void> {
  const res = await fetch(`${at.url}/reward`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({
      query: [sample.response],
      labels: [JSON.stringify({ role: sample.role, reference: sample.reference })],
    }),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  await res.json();
}

async function direct(sample: Sample): Promise<void> {
  await scoreReward("release", sample.role, sample, { sandbox });
}

async function compare(label: string, count: number, make: (i: number) => Sample) {
  if (count <= 0) return;
  // Distinct samples per phase: operation labels are cached per code string.
  await drive(Math.min(count, 50), (i) => viaServer(make(i + 2 * count))); // warm-up
  const inProcess = await drive(count, (i) => direct(make(i)));
  const http = await drive(count, (i) => viaServer(make(i + count)));
  console.log(`${label} rewards, ${count} requests, ${CLIENTS} clients (server concurrency 4):`);
  console.log(
    `  in-process scoreReward: ${inProcess.perSecond.toFixed(0)}/s, p99 ${inProcess.p99.toFixed(2)} ms`,
  );
  console.log(
    `  reward server (HTTP):   ${http.perSecond.toFixed(0)}/s, p99 ${http.p99.toFixed(2)} ms` +
      `  (throughput ratio server/in-process ${(http.perSecond / inProcess.perSecond).toFixed(2)})`,
  );
}

const CODE_CLIENTS = 8;
const ANSWER_CLIENTS = 4;

/**
 * Answer reward latencies while CODE_CLIENTS clients keep sending code that sleeps 3 s, for
 * `seconds`; the answer clients start once the code clients have filled the code limiter.
 */
async function contended(limiters: "shared" | "per-role", seconds: number) {
  const shared = new Limiter(4);
  const at = await start(
    limiters === "shared" ? { plan: shared, code: shared, answer: shared } : undefined,
  );
  const until = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let codeRewards = 0;
  const slowCode = (client: number, k: number): Sample => ({
    role: "code",
    response: `\`\`\`python\nimport time\ntime.sleep(3)\nprint(${client * 1000 + k})\n\`\`\``,
    reference: "print(6)",
  });
  const codeClient = async (client: number) => {
    for (let k = 0; performance.now() < until; k++) {
      await viaServer(slowCode(client, k), at);
      codeRewards++;
    }
  };
  const answerClient = async (client: number) => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (let i = 0; performance.now() < until; i++) {
      const t = performance.now();
      await viaServer(answerSample(client * 100_000 + i), at);
      latencies.push(performance.now() - t);
    }
  };
  try {
    await Promise.all([
      ...Array.from({ length: CODE_CLIENTS }, (_, c) => codeClient(c)),
      ...Array.from({ length: ANSWER_CLIENTS }, (_, c) => answerClient(c)),
    ]);
  } finally {
    await at.close();
  }
  latencies.sort((a, b) => a - b);
  return {
    answers: latencies.length,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    codeRewards,
  };
}

try {
  await compare("answer", answers, answerSample);
  await compare("plan", answers, planSample);
  await compare("code", codes, codeSample);
  if (contentionSeconds > 0) {
    const before = await contended("shared", contentionSeconds);
    const after = await contended("per-role", contentionSeconds);
    console.log(
      `answer rewards from ${ANSWER_CLIENTS} clients while ${CODE_CLIENTS} clients send 3-second code, ${contentionSeconds} s each (code concurrency 4):`,
    );
    for (const [label, run] of [
      ["one limiter for every role (before)", before],
      ["a limiter per role (now)          ", after],
    ] as const) {
      console.log(
        `  ${label}: ${run.answers} answers, p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms; ${run.codeRewards} code rewards`,
      );
    }
  }
} finally {
  await server.close();
  await closeSandboxes();
}
