import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph } from "../../graphs/orchestrator/graph.js";
import { SQL_SYSTEM } from "../../graphs/orchestrator/workers/builtin/sql.js";
import { reportSlowModelCalls } from "../../models/activity.js";
import { ask } from "../../nodes/llm.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { type Configuration, ensureConfiguration } from "../../settings/configuration.js";
import { adoptOperatorFields } from "../../settings/operator.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { MEDALS_QUESTION } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

/*
 * The decomposer asks with the planner's model and the sql worker with the coder's; what the
 * run says of them (warnings, failed calls, slow-call notices) names who spoke.
 */

const fast: Partial<Configuration> = { maxCodeAttempts: 1, llmMaxRetries: 0, llmTimeoutMs: 10_000 };
const SUM_SQL = "```sql\nSELECT sum(gold) AS total FROM olympics_2020_medals\n```";

describe("the orchestrator names who spoke", () => {
  let stub: StubServer | undefined;
  const warnings: string[] = [];
  const capture = (warning: Error) => warnings.push(warning.message);

  beforeAll(() => {
    useTempHome();
    process.on("warning", capture);
  });

  afterEach(async () => {
    await stub?.close();
    warnings.length = 0;
  });

  afterAll(async () => {
    process.off("warning", capture);
    await closeSandboxes();
  });

  async function run(respond: (req: StubRequest, index: number) => StubReply) {
    stub = await startStubOpenAI({ respond });
    useStubEndpoint(stub.url);
    const state = await graph.invoke(MEDALS_INPUT, { context: adoptOperatorFields(fast) });
    await new Promise((resolve) => setImmediate(resolve));
    return state;
  }

  it("the decomposer's and the sql worker's failed calls, retried", async () => {
    const seen = new Map<string, number>();
    const state = await run((req) => {
      const n = (seen.get(req.role) ?? 0) + 1;
      seen.set(req.role, n);
      if (n === 1) return { status: 500, content: `${req.role} is busy` };
      if (req.role === "decomposer") {
        return JSON.stringify({
          subtasks: [{ id: "s1", task: MEDALS_QUESTION, workers: ["sql"] }],
        });
      }
      if (req.role === "sql") return SUM_SQL;
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.answer?.final).toBe("203");
    const retried = warnings.filter((w) => w.endsWith("; running the node again"));
    expect(retried).toHaveLength(2);
    expect(retried[0]).toMatch(/^decomposer \(planner model "stub-model"\) at \S+ failed: 500 /);
    expect(retried[1]).toMatch(/^sql \(coder model "stub-model"\) at \S+ failed: 500 /);
  });

  it("a decomposer reply with no subtasks", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") return "I would add up the gold column.";
      if (req.role === "planner") return "<plan>\n1. Sum the gold column and print it.\n</plan>";
      if (req.role === "coder") return '```python\nprint(df["gold"].sum())\n```';
      if (req.role === "answerer") return "Final Answer: 203";
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.answer?.final).toBe("203");
    const said = warnings.find((w) => w.includes("solving the whole question with pandas"));
    expect(said).toMatch(/^the decomposer reply has no JSON object/);
  });

  it("a sql worker's reply with no query", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return JSON.stringify({
          subtasks: [{ id: "s1", task: MEDALS_QUESTION, workers: ["sql"] }],
        });
      }
      if (req.role === "sql") return "The total is in the gold column.";
      return { status: 500, content: `unscripted ${req.role}` };
    });
    const packet = state.packets.find((p) => p.id === "s1.sql");
    expect(packet?.error).toMatch(/^ReplyParseError: the sql reply has no SQL query/);
  });

  it("a slow call of the sql worker, while it waits", async () => {
    stub = await startStubOpenAI({ respond: () => SUM_SQL, latencyMs: 400 });
    useStubEndpoint(stub.url);
    const lines: string[] = [];
    const stop = reportSlowModelCalls({
      afterMs: 100,
      everyMs: 10_000,
      labelWidth: 10,
      write: (l) => lines.push(l),
    });
    try {
      await ask(
        "coder",
        SQL_SYSTEM,
        "Question: total gold?",
        ensureConfiguration(fast),
        undefined,
        {
          speaker: "sql",
        },
      );
    } finally {
      stop();
    }
    expect(lines[0]).toMatch(/^sql {8}waiting 0 s for 127\.0\.0\.1:\d+ \(model stub-model\)$/);
  });
});
