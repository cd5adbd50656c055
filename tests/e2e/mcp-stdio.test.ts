import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPH_DESCRIPTIONS } from "../../cli/graph-list.js";
import { BIN, ROOT } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { lastMessage, MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
/** A question whose planner call never gets a reply: the run waits until it is cancelled. */
const SLOW_QUESTION = "Which nation won the fewest bronze medals? (slow)";

type Structured = Record<string, unknown>;

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("tableminds mcp over stdio", () => {
  let stub: StubServer;
  let client: Client;
  let stderr = "";

  beforeAll(async () => {
    const team = medalsTeam();
    stub = await startStubOpenAI({
      respond: (req) => (lastMessage(req).includes("(slow)") ? { hang: true } : team(req)),
    });
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...stubEnv(stub.url) })) {
      if (value !== undefined) env[key] = value;
    }
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp"],
      cwd: ROOT,
      env,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (data) => {
      stderr += data;
    });
    client = new Client({ name: "tableminds-test", version: "0.0.0" });
    await client.connect(transport);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await stub?.close();
  });

  it("lists ask, inspect_table and list_graphs", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["ask", "inspect_table", "list_graphs"]);
    const ask = tools.find((t) => t.name === "ask");
    expect(ask?.inputSchema.required).toEqual(["question", "tables"]);
    expect(ask?.outputSchema?.properties).toHaveProperty("verdict");
  });

  it("answers 203 with its evidence and verdict, telling each step as progress", async () => {
    const progress: string[] = [];
    const result = await client.callTool(
      { name: "ask", arguments: { question: MEDALS_QUESTION, tables: [TABLE] } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ""), timeout: 50_000 },
    );
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const out = result.structuredContent as Structured;
    const answer = out.answer as { final: string; evidence: string[] };
    expect(answer.final).toBe("203");
    expect(answer.evidence).toContain("a1:out2");
    const evidence = out.evidence as { id: string }[];
    expect(evidence.map((e) => e.id)).toContain("a1:by_nation");
    expect(out.verdict).toMatchObject({ pass: true, sure: true, support: "derived" });
    // The text is what `ask --json` prints.
    const [text] = result.content as { type: string; text: string }[];
    expect(JSON.parse(text?.text ?? "")).toEqual(out);
    const nodes = progress.map((m) => m.split(":")[0]);
    for (const node of ["ingest", "planner", "coder", "executor", "answerer", "checker"]) {
      expect(nodes).toContain(node);
    }
    expect(nodes.indexOf("planner")).toBeLessThan(nodes.indexOf("executor"));
    expect(progress).toContain("answerer: 203");
  }, 55_000);

  it("inspects a table: columns, types, row count, first rows", async () => {
    const result = await client.callTool({
      name: "inspect_table",
      arguments: { table: TABLE, rows: 2 },
    });
    expect(result.isError).toBeFalsy();
    const [table] = (result.structuredContent as { tables: Structured[] }).tables;
    expect(table?.rows).toBe(10);
    const columns = (table?.columns ?? []) as { name: string }[];
    expect(columns.map((c) => c.name)).toEqual([
      "rank",
      "nation",
      "gold",
      "silver",
      "bronze",
      "total",
    ]);
    expect(table?.firstRows).toEqual([
      ["1", "United States", "39", "41", "33", "113"],
      ["2", "China", "38", "32", "18", "88"],
    ]);
  });

  it("inspects CSV text given inline", async () => {
    const result = await client.callTool({
      name: "inspect_table",
      arguments: { table: { csv: "city,people\nOslo,709000\nBergen,291000\n", name: "cities" } },
    });
    const [table] = (result.structuredContent as { tables: Structured[] }).tables;
    expect(table).toMatchObject({ name: "cities", rows: 2 });
    expect(table?.columns).toEqual([
      { name: "city", dtype: "object" },
      { name: "people", dtype: "int64" },
    ]);
  });

  it("lists the graphs with what each does", async () => {
    const result = await client.callTool({ name: "list_graphs", arguments: {} });
    const { graphs } = result.structuredContent as { graphs: Structured[] };
    expect(graphs.map((g) => g.name)).toEqual(["table_qa", "mom", "mcts", "orchestrator"]);
    expect(graphs[0]?.description).toBe(GRAPH_DESCRIPTIONS.table_qa);
  });

  it("refuses a table outside the roots and an operator's setting as tool errors, and goes on", async () => {
    const outside = await client.callTool({
      name: "ask",
      arguments: { question: MEDALS_QUESTION, tables: ["/etc/hostname"] },
    });
    expect(outside.isError).toBe(true);
    expect(JSON.stringify(outside.content)).toMatch(/outside the table roots/);
    const operator = await client.callTool({
      name: "ask",
      arguments: { question: MEDALS_QUESTION, tables: [TABLE], configuration: { workersDir: "/" } },
    });
    expect(operator.isError).toBe(true);
    expect(JSON.stringify(operator.content)).toMatch(/workersDir: set by the operator/);
    const still = await client.callTool({ name: "list_graphs", arguments: {} });
    expect(still.isError).toBeFalsy();
  });

  it("stops the run, model call included, when the client cancels", async () => {
    const cancel = new AbortController();
    const call = client.callTool(
      { name: "ask", arguments: { question: SLOW_QUESTION, tables: [TABLE] } },
      undefined,
      { signal: cancel.signal, timeout: 50_000 },
    );
    const rejected = expect(call).rejects.toThrow();
    await until(() => stub.inFlight().now === 1);
    cancel.abort("the user changed their mind");
    await rejected;
    // The server aborted the graph, which dropped the planner's request to the model.
    await until(() => stub.inFlight().now === 0);
    const still = await client.callTool({ name: "list_graphs", arguments: {} });
    expect(still.isError, stderr).toBeFalsy();
  }, 40_000);
});
