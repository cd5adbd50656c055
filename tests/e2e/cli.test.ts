import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

/** Settles once the child's stderr has printed a line matching `pattern`. */
function stderrLine(child: ReturnType<typeof startCli>["child"], pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let seen = "";
    child.stderr?.on("data", (data) => {
      seen += data;
      const line = seen.split("\n").find((l) => pattern.test(l));
      if (line) resolve(line);
    });
  });
}

/** A hold that a test lets go of. */
function hold() {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { held, release };
}

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

describe("tableminds CLI", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    // Other tests of this file run their own stubs for minutes on a busy machine: this one waits.
    stub = await startStubOpenAI({ respond: medalsTeam(), idleTimeoutMs: 300_000 });
    env = stubEnv(stub.url);
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("answers, streams progress per node, and prints the evidence", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).toContain("[a1:out2]");
    expect(result.stdout).toContain("4 | print(total)");
    const stages = result.stderr
      .split("\n")
      .map((line) => line.split(/\s+/)[0])
      .filter(Boolean);
    // The executor's own line comes with two live events: the code starting, its evidence.
    expect(stages).toEqual([
      "ingest",
      "planner",
      "coder",
      "executor",
      "executor",
      "executor",
      "answerer",
      "checker",
    ]);
    expect(result.stderr).toMatch(/^executor\s+a1 running 4 lines of python$/m);
    expect(result.stderr).toMatch(/^executor\s+evidence .*a1:out2/m);
    expect(result.stderr).toMatch(/^checker\s+passed \(type 2\/2, format 2\/2, grounding 2\/2\)$/m);
    expect(result.stderr).toContain("olympics_2020_medals (10 rows x 6 columns)");
    expect(result.stdout).toMatch(
      /^Check: passed \(type 2\/2, format 2\/2, grounding 2\/2; by rules\)$/m,
    );
  });

  it("recalls the lesson of the first run from $TABLEMINDS_HOME/memory.sqlite in a new process", async () => {
    // Another wording of the same question: the scripted team sums gold, so asking about
    // silver would rightly fail the check (the result does not depend on silver).
    const reworded = MEDALS_QUESTION.replace("these ten nations", "the ten nations listed");
    const result = await runCli(["ask", TABLE, reworded], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^recall\s+1 lesson from similar past questions \(similarity 0\.\d\d\)$/m,
    );
    const forgetful = await runCli(["ask", TABLE, MEDALS_QUESTION, "--no-memory"], env);
    expect(forgetful.stderr).not.toMatch(/^recall/m);
  });

  it("prints {answer, evidence, plan, attempts} with --json", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION, "--json", "--quiet"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const json = JSON.parse(result.stdout);
    expect(json.answer.final).toBe("203");
    expect(json.answer.evidence).toContain("a1:out2");
    expect(json.plan).toHaveLength(2);
    expect(json.attempts[0].result.ok).toBe(true);
    expect(json.evidence.map((e: { id: string }) => e.id)).toContain("a1:by_nation");
  });

  it("keeps stdout to the JSON answer when a node has to retry its model call", async () => {
    let plannerCalls = 0;
    const team = medalsTeam();
    // The client's own retries are off, so the node's retry is what recovers.
    const flaky = await startStubOpenAI({
      respond: (req) =>
        req.role === "planner" && ++plannerCalls === 1 ? { status: 503 } : team(req),
    });
    try {
      const result = await runCli(
        ["ask", TABLE, MEDALS_QUESTION, "--json", "--no-memory", "--llm-retries", "0"],
        stubEnv(flaky.url),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).answer.final).toBe("203");
      expect(result.stderr).toMatch(
        /^tableminds: warning: planner model .* 503 .*; running the node again$/m,
      );
      expect(plannerCalls).toBe(2);
    } finally {
      await flaky.close();
    }
  });

  it("tells on stderr that a model call is waiting, stdout staying JSON only", async () => {
    const team = medalsTeam();
    const { held, release } = hold();
    const slow = await startStubOpenAI({
      respond: (req: StubRequest): StubReply => {
        const reply = team(req);
        return req.role === "answerer" && typeof reply === "string"
          ? { content: reply, until: held }
          : reply;
      },
    });
    try {
      const run = startCli(
        ["ask", TABLE, MEDALS_QUESTION, "--json", "--no-memory"],
        stubEnv(slow.url),
      );
      const host = new URL(slow.url).host.replaceAll(".", "\\.");
      const notice = await stderrLine(run.child, /waiting/);
      release();
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
      expect(notice).toMatch(
        new RegExp(`^answerer   waiting \\d+ s for ${host} \\(model stub-model\\)$`),
      );
      expect(JSON.parse(result.stdout).answer.final).toBe("203");
    } finally {
      release();
      await slow.close();
    }
  });

  it("fails at once, without running the node again, when nothing listens at the endpoint", async () => {
    const gone = await startStubOpenAI({});
    await gone.close();
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION, "--no-memory"], stubEnv(gone.url));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).not.toContain("running the node again");
    expect(result.stderr).toMatch(
      new RegExp(
        `^tableminds: planner model "stub-model" at ${gone.url.replaceAll(".", "\\.")} failed: .*ECONNREFUSED.*$`,
        "m",
      ),
    );
  });

  it("does not run a node again for a 404", async () => {
    let plannerCalls = 0;
    const team = medalsTeam();
    const missing = await startStubOpenAI({
      respond: (req) => {
        if (req.role !== "planner") return team(req);
        plannerCalls++;
        return { status: 404, content: "The model `stub-model` does not exist." };
      },
    });
    try {
      const result = await runCli(
        ["ask", TABLE, MEDALS_QUESTION, "--no-memory"],
        stubEnv(missing.url),
      );
      expect(result.code).toBe(1);
      expect(plannerCalls).toBe(1);
      expect(result.stderr).not.toContain("running the node again");
      expect(result.stderr.trimEnd().split("\n").at(-1)).toMatch(
        /^tableminds: planner model "stub-model" at \S+ failed: 404 The model `stub-model` does not exist\.$/,
      );
    } finally {
      await missing.close();
    }
  });

  it("says how to resume an interrupted --thread run, exits 130, and resumes with that command", async () => {
    const team = medalsTeam();
    let reached = () => {};
    const answering = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let holding = true;
    const stub2 = await startStubOpenAI({
      respond: (req: StubRequest): StubReply => {
        if (req.role !== "answerer" || !holding) return team(req);
        reached();
        return { hang: true };
      },
    });
    try {
      const env2 = stubEnv(stub2.url);
      const args = ["ask", TABLE, MEDALS_QUESTION, "--thread", "t-ctrl-c", "--no-memory"];
      const run = startCli(args, env2);
      await answering;
      run.child.kill("SIGINT");
      const stopped = await run.done;
      expect(stopped.code).toBe(130);
      expect(stopped.stdout).toBe("");
      const resume = `tableminds ask ${TABLE} '${MEDALS_QUESTION}' --thread t-ctrl-c --no-memory`;
      expect(stopped.stderr.trimEnd().split("\n").at(-1)).toBe(
        `tableminds: interrupted; resume with: ${resume}`,
      );
      holding = false;
      const resumed = await runCli(args, env2);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/resume thread t-ctrl-c at answerer/);
      expect(resumed.stdout).toMatch(/^Answer: 203$/m);
    } finally {
      await stub2.close();
    }
  });

  it("lists in --help every field --json prints", async () => {
    const printed = await runCli(["ask", TABLE, MEDALS_QUESTION, "--json", "--quiet"], env);
    expect(printed.code, printed.stderr).toBe(0);
    const fields = Object.keys(JSON.parse(printed.stdout));
    const help = (await runCli(["ask", "--help"], env)).stdout.replace(/\s+/g, " ");
    expect(help).toContain(`--json print {${fields.join(", ")}} as JSON`);
  });

  it("says what to set when no model endpoint is configured", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION], {
      ...env,
      OPENAI_BASE_URL: undefined,
      OPENAI_API_KEY: undefined,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/OPENAI_API_KEY/);
    expect(result.stderr).toMatch(/OPENAI_BASE_URL/);
  });

  it("names the file and the problem for a missing table", async () => {
    const result = await runCli(["ask", "no/such/table.csv", "q?"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no\/such\/table\.csv/);
  });

  it("rejects an unknown graph and lists the known ones", async () => {
    const result = await runCli(["ask", TABLE, "q?", "--graph", "nope"], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/unknown graph "nope".*table_qa/);
  });

  it("documents every option and environment variable in --help", async () => {
    const result = await runCli(["ask", "--help"], env);
    expect(result.code).toBe(0);
    for (const word of [
      "--json",
      "--graph",
      "--model",
      "--max-code-attempts",
      "--exec-timeout",
      "--thread",
      "--no-memory",
      "--max-reflections",
      "--llm-checker",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "TABLEMINDS_MODEL",
      "TABLEMINDS_PYTHON",
      "TABLEMINDS_HOME",
    ]) {
      expect(result.stdout).toContain(word);
    }
  });
});
