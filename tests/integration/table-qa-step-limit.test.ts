import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableQAGraphStateValue } from "../../blackboard/state.js";
import { graph, stepBound } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { enterServedMode, setOperatorSettings } from "../../settings/operator.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * table_qa's longest run (every code fails, every reflection used) against the step limit
 * stepBound gives: a served run, whose answer a client draws, takes the presenter's step and fits
 * with not one step to spare; a run no client draws (the CLI, an evaluation) ends one step sooner.
 * Served mode lasts for the rest of the process, so this file has it to itself.
 */

const fast = { llmMaxRetries: 1, llmTimeoutMs: 3_000, maxCodeAttempts: 2 };

describe("table_qa's step limit", () => {
  let stub: StubServer;
  const limit = stepBound({ maxCodeAttempts: 2, maxReflections: 2 });
  const longest = (recursionLimit: number, runId?: string) =>
    graph.invoke(MEDALS_INPUT, {
      ...withContext(fast),
      recursionLimit,
      ...(runId ? { metadata: { run_id: runId } } : {}),
    }) as Promise<TableQAGraphStateValue>;

  beforeAll(async () => {
    useTempHome();
    const team = medalsTeam(() => '```python\nraise ValueError("no luck")\n```');
    stub = await startStubOpenAI({
      respond: (req) => (req.role === "answerer" ? "Final Answer: cannot be computed" : team(req)),
    });
    useStubEndpoint(stub.url);
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub.close();
  });

  it("fits a run no client draws in one step less than the limit, and not in two less", async () => {
    expect((await longest(limit - 1)).attempts).toHaveLength(6);
    await expect(longest(limit - 2)).rejects.toThrow(/Recursion limit/i);
  });

  it("fits a served run, which ends in the presenter, with not one step to spare", async () => {
    enterServedMode();
    const [source] = MEDALS_INPUT.sources;
    if (!source || !("path" in source)) throw new Error("the medals input names a file");
    setOperatorSettings({ tableRoots: [path.dirname(path.resolve(source.path))] });
    const served = await longest(limit, randomUUID());
    expect(served.attempts).toHaveLength(6);
    expect(served.ui.map((m) => m.name)).toContain("answer");
    await expect(longest(limit - 1, randomUUID())).rejects.toThrow(/Recursion limit/i);
  });
});
