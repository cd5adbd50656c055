import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { FOLLOW_UP, followUpTeam, promptsOf, silverTotal } from "../support/follow-up.js";
import { MEDALS_QUESTION } from "../support/scripts.js";
import type { StubReply, StubRequest } from "../support/stub-openai.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

describe("tableminds ask --thread", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  /** While set, the answerer's request never gets a reply and this is called instead. */
  let onAnswerer: (() => void) | undefined;
  const team = followUpTeam();

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: (req: StubRequest): StubReply => {
        if (req.role === "answerer" && onAnswerer) {
          onAnswerer();
          return { hang: true };
        }
        return team(req);
      },
    });
    env = stubEnv(stub.url);
  });

  afterAll(async () => {
    await stub?.close();
  });

  const roles = (from: number) => stub.requests.slice(from).map((r) => r.role);

  it("resumes a run killed mid-way from its last checkpoint, without redoing finished steps", async () => {
    const args = ["ask", TABLE, MEDALS_QUESTION, "--thread", "t-kill", "--no-memory"];
    const reached = new Promise<void>((resolve) => {
      onAnswerer = resolve;
    });
    const first = startCli(args, env);
    await reached;
    first.child.kill("SIGKILL");
    const killed = await first.done;
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.stdout).toBe("");
    expect(killed.stderr).toMatch(/^executor\s+a1 ok/m);
    onAnswerer = undefined;

    const before = stub.requests.length;
    const resumed = await runCli(args, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/resume thread t-kill at answerer/);
    expect(resumed.stdout).toMatch(/^Answer: 203$/m);
    expect(resumed.stdout).toContain("[a1:out2]");
    // Planning, coding and running were saved: only the answer (and what follows) is new.
    expect(roles(before)).not.toContain("planner");
    expect(roles(before)).not.toContain("coder");
    expect(roles(before)).toContain("answerer");
  });

  it("prints a finished thread's answer again without calling the model", async () => {
    const args = ["ask", TABLE, MEDALS_QUESTION, "--thread", "t-done", "--no-memory"];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    const before = stub.requests.length;
    const again = await runCli(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Answer: 203$/m);
    expect(again.stderr).toContain("thread t-done has finished");
    expect(stub.requests.length).toBe(before);
  });

  it("continues a finished thread with a follow-up, told the earlier question, answer and tables", async () => {
    const ask = (question: string) =>
      runCli(["ask", TABLE, question, "--thread", "t-talk", "--no-memory"], env);
    const first = await ask(MEDALS_QUESTION);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Answer: 203$/m);

    const before = stub.requests.length;
    const second = await ask(FOLLOW_UP);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("thread t-talk: a follow-up to 1 earlier question");
    // Computed by the follow-up's code at its first attempt: it read `by_nation`, the table the
    // first question's code left, which would have failed had that table not been carried over.
    expect(second.stdout).toMatch(new RegExp(`^Answer: ${silverTotal()}$`, "m"));
    expect(roles(before)).toEqual(["planner", "coder", "answerer"]);
    for (const role of ["planner", "coder"]) {
      const [prompt] = promptsOf(stub.requests, role, before);
      expect(prompt, role).toContain(`1. Question: ${MEDALS_QUESTION}\n   Answer: 203`);
      expect(prompt, role).toContain("`by_nation`");
      expect(prompt, role).toContain(`Question: ${FOLLOW_UP}`);
    }

    // Asked again, the follow-up's own answer is printed, not the first question's.
    const again = await ask(FOLLOW_UP);
    expect(again.stderr).toContain("thread t-talk has finished");
    expect(again.stdout).toMatch(new RegExp(`^Answer: ${silverTotal()}$`, "m"));
  });

  it("asks for an unfinished run to be resumed before a new question on its thread", async () => {
    const args = ["ask", TABLE, MEDALS_QUESTION, "--thread", "t-open", "--no-memory"];
    const reached = new Promise<void>((resolve) => {
      onAnswerer = resolve;
    });
    const first = startCli(args, env);
    await reached;
    first.child.kill("SIGKILL");
    await first.done;
    onAnswerer = undefined;
    const result = await runCli(
      ["ask", TABLE, FOLLOW_UP, "--thread", "t-open", "--no-memory"],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/thread "t-open" has not finished its run for "How many gold/);
  });
});
