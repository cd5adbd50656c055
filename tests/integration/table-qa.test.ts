import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { lastMessage, MEDALS_CODE, medalsTeam } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const BROKEN = '```python\ntotal = df["golds"].sum()\nprint(total)\n```';

describe("table_qa against a stub model and the real local sandbox", () => {
  let stub: StubServer;
  let state: TableQAStateValue;

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({
      respond: medalsTeam((n) => (n === 0 ? BROKEN : MEDALS_CODE)),
    });
    useStubEndpoint(stub.url);
    state = (await graph.invoke(
      MEDALS_INPUT,
      withContext({ maxCodeAttempts: 3 }),
    )) as TableQAStateValue;
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it("answers with the value the sandbox computed", () => {
    expect(state.answer?.final).toBe("203");
    expect(state.plan).toEqual([
      "Keep the nation and gold columns.",
      "Sum the gold column and print it.",
    ]);
  });

  it("retried the failing attempt and showed the coder its error", () => {
    expect(state.attempts.map((a) => a.id)).toEqual(["a1", "a2"]);
    expect(state.attempts[0]?.result?.error).toMatchObject({ type: "KeyError", line: 1 });
    expect(state.attempts[1]?.result?.ok).toBe(true);
    const coderRequests = stub.requests.filter((r) => r.role === "coder");
    expect(coderRequests).toHaveLength(2);
    expect(lastMessage(coderRequests[0] as StubRequest)).not.toContain("KeyError");
    expect(lastMessage(coderRequests[1] as StubRequest)).toContain("KeyError");
    expect(lastMessage(coderRequests[1] as StubRequest)).toContain('df["golds"]');
  });

  it("cites evidence anchored to the printing line and its stdout slice", () => {
    const cited = state.answer?.evidence ?? [];
    expect(cited).toContain("a2:out2");
    const packet = state.evidence.find((e) => e.id === "a2:out2");
    expect(packet?.anchor.kind).toBe("code");
    if (packet?.anchor.kind !== "code") return;
    expect(packet.anchor.lines).toEqual([4, 4]);
    const stdout = state.attempts[1]?.result?.stdout ?? "";
    expect(stdout.slice(packet.anchor.stdout[0], packet.anchor.stdout[1])).toBe("203");
    const code = state.attempts[1]?.code.split("\n") ?? [];
    expect(code[packet.anchor.lines[0] - 1]).toBe("print(total)");
  });

  it("posts the intermediate table with its assigning line", () => {
    const table = state.evidence.find((e) => e.id === "a2:by_nation");
    expect(table?.modality).toBe("table");
    expect(table?.anchor).toMatchObject({ kind: "code", lines: [1, 1] });
    expect(table?.value).toMatchObject({ rows: 10 });
  });

  it("keeps tables by reference and accounts for every model call", () => {
    expect(state.tables[0]?.uri).toMatch(/[0-9a-f]{64}\.csv$/);
    expect(JSON.stringify(state)).not.toContain("Great Britain");
    expect(state.budget.llmCalls).toBe(4);
    expect(state.budget.promptTokens).toBeGreaterThan(0);
  });
});
