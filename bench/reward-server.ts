/**
 * Reward server throughput and p99 latency at 16 concurrent clients (not a test), beside
 * calling scoreReward in-process with the same 16-way concurrency: answer rewards, plan rewards
 * (BLEU), then code rewards (sandbox runs; the pseudo-gold run is cached, each prediction
 * differs). The in-process rates are the rewards scored per second for each role.
 *
 *   npx tsx bench/reward-server.ts [answer and plan requests, default 4000] [code requests, default 300]
 */
import { closeSandboxes, getSandbox } from "../tools/sandbox/index.js";
import { type Role, scoreReward } from "../training/rewards/index.js";
import { startRewardServer } from "../training/server/index.js";

const CLIENTS = 16;
const TOKEN = "bench-token";
const answers = Number(process.argv[2] ?? 4000);
const codes = Number(process.argv[3] ?? 300);

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
  const p99 = latencies[Math.min(latencies.length - 1, Math.ceil(0.99 * latencies.length) - 1)];
  return { perSecond: (1000 * count) / wall, p99: p99 ?? 0 };
}

const sandbox = await getSandbox("local");
const server = await startRewardServer({
  host: "127.0.0.1",
  port: 0,
  token: TOKEN,
  preset: "release",
  concurrency: 4,
  bodyLimitBytes: 1024 * 1024,
  sandbox,
  prefixMismatch: "reject",
});

async function viaServer(sample: Sample): Promise<void> {
  const res = await fetch(`${server.url}/reward`, {
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

try {
  await compare("answer", answers, answerSample);
  await compare("plan", answers, planSample);
  await compare("code", codes, codeSample);
} finally {
  await server.close();
  await closeSandboxes();
}
