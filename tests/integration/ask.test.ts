import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ask, RunDeadlineError } from "../../cli/ask.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubReply, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

/** What `ask` writes to stdout and stderr while `fn` runs, with stderr a terminal or not. */
async function captured<T>(tty: boolean, fn: () => Promise<T>) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  const wasTTY = process.stderr.isTTY;
  process.stderr.isTTY = tty;
  try {
    const error = await fn().then(
      () => undefined,
      (e: unknown) => e ?? new Error("rejected with nothing"),
    );
    return { error, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stderr.isTTY = wasTTY;
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("ask, in process", () => {
  let stub: StubServer;
  let answerer: StubReply | undefined;
  const team = medalsTeam();

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({
      respond: (req) => (req.role === "answerer" && answerer ? answerer : team(req)),
    });
    useStubEndpoint(stub.url);
  });

  afterEach(() => {
    answerer = undefined;
  });

  afterAll(async () => {
    await stub.close();
    await closeSandboxes();
  });

  const base = { tables: [TABLE], question: MEDALS_QUESTION, graph: "table_qa", memory: false };

  it("stops at the run's deadline with one line naming it", async () => {
    answerer = { hang: true };
    const run = await captured(false, () =>
      ask({ ...base, json: true, quiet: true, context: { runTimeoutMs: 1500 } }),
    );
    expect(run.error).toBeInstanceOf(RunDeadlineError);
    expect((run.error as Error).message).toBe(
      "the run did not finish within its deadline of 1.5 s (runTimeoutMs; 0 for none)",
    );
    expect(run.stdout).toBe("");
  });

  it("streams the answerer's tokens to stderr when it is a terminal, stdout staying JSON", async () => {
    answerer = "The code printed the total.\nFinal Answer: 203\nEvidence: a1:out2";
    const run = await captured(true, () =>
      ask({ ...base, json: true, quiet: false, context: { streaming: true } }),
    );
    expect(run.error).toBeUndefined();
    expect(stub.requests.at(-1)?.stream).toBe(true);
    expect(run.stderr).toContain("answerer   The code printed the total.\nFinal Answer: 203");
    expect(JSON.parse(run.stdout).answer.final).toBe("203");
  });

  it("streams nothing to a stderr that is not a terminal", async () => {
    answerer = "The code printed the total.\nFinal Answer: 203\nEvidence: a1:out2";
    const run = await captured(false, () =>
      ask({ ...base, json: true, quiet: false, context: { streaming: true } }),
    );
    expect(run.error).toBeUndefined();
    expect(run.stderr).not.toContain("The code printed the total.");
    expect(run.stderr).toMatch(/^answerer +203$/m);
  });
});
