import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { scoreReward } from "../../training/rewards/index.js";
import { type RewardServer, startRewardServer } from "../../training/server/index.js";
import { useTempHome } from "../support/env.js";

/*
 * The reward server's limits: each role waits only for its own limiter, and a request without
 * the token, or with a body over the limit, is refused before its body is read.
 */

const TOKEN = "limits-token-0123456789";
const BODY_LIMIT = 64 * 1024;
useTempHome();
let server: RewardServer;

beforeAll(async () => {
  server = await startRewardServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    preset: "release",
    concurrency: { plan: 2, code: 1, answer: 2 },
    bodyLimitBytes: BODY_LIMIT,
    sandbox: await getSandbox("local"),
    prefixMismatch: "reject",
  });
});

afterAll(async () => {
  await server?.close();
  await closeSandboxes();
});

const post = (route: string, body: unknown) =>
  fetch(`${server.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const PLAN = "<plan>\n1. Keep the rows where year is 2020.\n2. Sum the gold column.\n</plan>";

describe("limits per role", () => {
  it("answer and plan rewards finish while code rewards hold and queue for the sandbox", async () => {
    // Two slow code rewards through a code limiter of one: one runs, one waits.
    let codeSettled = 0;
    const codes = [1, 2].map((i) =>
      post("/reward/code", {
        query: [`\`\`\`python\nimport time\ntime.sleep(3)\nprint(${i})\n\`\`\``],
        labels: ['{"reference": "print(1)"}'],
      }).finally(() => codeSettled++),
    );
    for (let k = 0; k < 2000 && server.limiters.code.active < 1; k++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(server.limiters.code.active).toBe(1);

    const cheap = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? post("/reward/answer", {
              query: [`Final Answer: ${i}`],
              labels: [`{"reference":"${i}"}`],
            })
          : post("/reward/plan", {
              query: [PLAN],
              labels: [JSON.stringify({ reference: PLAN })],
            }),
      ),
    );
    const settledWhenCheapDone = codeSettled;
    const rewards = await Promise.all(
      cheap.map(async (r) => ((await r.json()) as { rewards: number[] }).rewards[0]),
    );
    const plan = await scoreReward("release", "plan", { response: PLAN, reference: PLAN });
    expect(rewards).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 1 : plan.reward)));
    // All twenty were scored while the first code reward still ran and the second waited.
    expect(settledWhenCheapDone).toBe(0);

    const replies = await Promise.all(codes);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(server.limiters.code.peak).toBe(1);
    expect(server.limiters.answer.peak).toBeLessThanOrEqual(2);
    expect(server.limiters.plan.peak).toBeLessThanOrEqual(2);
  }, 60_000);

  it("says each role's limit on /health", async () => {
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health).toMatchObject({ concurrency: { plan: 2, code: 1, answer: 2 } });
  });
});

const MB = 1024 * 1024;
const HUGE = 200 * MB;

/**
 * Sends `head` then up to HUGE bytes of body (one 1 MB buffer, written again and again) until
 * the server closes the connection. Returns the reply's status line and how much of the body
 * the connection took before it closed.
 */
function sendHuge(head: string, chunked = false): Promise<{ status: string; sent: number }> {
  const chunk = Buffer.alloc(MB, 0x20);
  const framed = chunked
    ? Buffer.concat([Buffer.from(`${MB.toString(16)}\r\n`), chunk, Buffer.from("\r\n")])
    : chunk;
  return new Promise((resolve) => {
    let sent = 0;
    let reply = "";
    const socket = net.connect(server.port, "127.0.0.1", () => {
      socket.write(head);
      const pump = () => {
        while (sent < HUGE && !socket.destroyed) {
          sent += MB;
          if (!socket.write(framed)) {
            socket.once("drain", pump);
            return;
          }
        }
      };
      pump();
    });
    socket.on("data", (data) => {
      reply += data.toString("latin1");
    });
    socket.on("error", () => {}); // the server closing mid-upload: EPIPE or ECONNRESET
    socket.on("close", () => resolve({ status: reply.split("\r\n")[0] ?? "", sent }));
  });
}

const head = (path: string, headers: string[]) =>
  [
    `POST ${path} HTTP/1.1`,
    "Host: reward",
    "Content-Type: application/json",
    ...headers,
    "",
    "",
  ].join("\r\n");

describe("bodies cut off early", () => {
  it("a 200 MB body without a token: 401, the connection closed, the body never read", async () => {
    const rss = process.memoryUsage().rss;
    const { status, sent } = await sendHuge(head("/reward", [`Content-Length: ${HUGE}`]));
    expect(status).toBe("HTTP/1.1 401 Unauthorized");
    // The socket closed long before the body was through: only what the buffers held went out.
    expect(sent).toBeLessThan(HUGE / 4);
    expect(process.memoryUsage().rss - rss).toBeLessThan(HUGE / 2);
  }, 60_000);

  it("the same with a wrong ?token= and a chunked body", async () => {
    const { status, sent } = await sendHuge(
      head("/reward/code?token=wrong", ["Transfer-Encoding: chunked"]),
      true,
    );
    expect(status).toBe("HTTP/1.1 401 Unauthorized");
    expect(sent).toBeLessThan(HUGE / 4);
  }, 60_000);

  it("a declared length over the limit: 413 at once, with the token", async () => {
    const { status, sent } = await sendHuge(
      head("/reward", [`Authorization: Bearer ${TOKEN}`, `Content-Length: ${HUGE}`]),
    );
    expect(status).toBe("HTTP/1.1 413 Payload Too Large");
    expect(sent).toBeLessThan(HUGE / 4);
  }, 60_000);

  it("a chunked body counted as it streams: 413 past the limit, the connection closed", async () => {
    const { status, sent } = await sendHuge(
      head("/reward", [`Authorization: Bearer ${TOKEN}`, "Transfer-Encoding: chunked"]),
      true,
    );
    expect(status).toBe("HTTP/1.1 413 Payload Too Large");
    expect(sent).toBeLessThan(HUGE / 4);
  }, 60_000);

  it("an unknown path needs the token too; GET /health does not", async () => {
    const res = await fetch(`${server.url}/score`, { method: "POST", body: "{}" });
    expect(res.status).toBe(401);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
