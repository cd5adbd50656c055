import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  AnswerSchema,
  BudgetSchema,
  EvidenceSchema,
  type TableRef,
  VerdictSchema,
} from "../blackboard/schemas.js";
import { listGraphs } from "../graphs/registry.js";
import { readingOptionsOf } from "../nodes/ingest.js";
import { loadTables } from "../tables/load.js";
import { profileTable } from "../tables/profile.js";
import { readTable } from "../tables/read.js";
import { GRAPH_DESCRIPTIONS, graphLines } from "./graph-list.js";
import { whereLines } from "./inspect.js";
import { type GraphShelf, runAsk } from "./mcp-ask.js";
import {
  callerSettings,
  ReadingSchema,
  RunSettingsSchema,
  TableInputSchema,
  tableSources,
} from "./mcp-inputs.js";
import { jsonResult } from "./report.js";

/*
 * `tableminds mcp`: the tools an MCP client (a desktop assistant, an IDE's agent) calls. One
 * McpServer per connection; the transports (cli/mcp.ts, cli/mcp-http.ts) decide the policy
 * in force before they build it: the table roots and whether the process is served.
 */

export interface McpOptions {
  graphs: GraphShelf;
  /** The authenticated user of a served connection (memory is kept per user); none on stdio. */
  user?: string;
}

const INSTRUCTIONS = [
  "Answers questions about tables (CSV, TSV, JSON, Excel, Parquet) with a team of LLM agents, and",
  "returns the evidence for each answer: the cells, the code lines and the output it rests on.",
  "Call inspect_table first to see a table's columns; then ask. An answer whose verdict says",
  "sure: false is only a best candidate: say so rather than asserting it.",
].join(" ");

const AskOutputSchema = z.looseObject({
  answer: AnswerSchema.nullish().describe("the final answer and the evidence ids it cites"),
  evidence: z.array(EvidenceSchema).optional(),
  plan: z.array(z.string()).optional(),
  attempts: z.array(z.unknown()).optional().describe("each code attempt, its code and run"),
  verdict: VerdictSchema.nullish().describe("the check: pass, sure, confidence, support, issues"),
  reflections: z.array(z.unknown()).optional(),
  memories: z.array(z.unknown()).optional(),
  budget: BudgetSchema.optional(),
});

const InspectedSchema = z.object({
  name: z.string(),
  rows: z.number().int(),
  columns: z.array(z.object({ name: z.string(), dtype: z.string() })),
  where: z.array(z.string()).describe("where the header and columns are in the file"),
  firstRows: z.array(z.array(z.string())).describe("the first rows' cells, in column order"),
  profile: z.string().describe("the table as the model is told it"),
});

const GraphsOutputSchema = z.object({
  graphs: z.array(z.object({ name: z.string(), description: z.string(), spec: z.string() })),
});

function asText(value: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
    structuredContent: value,
  };
}

/** The first rows of a stored table; none when its artifact is not a CSV (a Parquet file). */
async function firstRows(table: TableRef, count: number): Promise<string[][]> {
  if (count === 0 || !table.uri.endsWith(".csv")) return [];
  return (await readTable(table)).rows.slice(0, count);
}

export function createMcpServer(options: McpOptions): McpServer {
  const server = new McpServer(
    { name: "tableminds", version: "0.1.0" },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  const graphs = listGraphs();
  const names = Object.keys(graphs);

  server.registerTool(
    "ask",
    {
      title: "Ask a question about tables",
      description:
        "Answer a question about one or more tables, with the evidence: the answer, the check's verdict (pass, sure, confidence) and the cells, code and output it rests on. Sends a progress notification per step (planner, coder, executor, ...) when given a progressToken; a cancelled request stops the run.",
      inputSchema: z.object({
        question: z.string().trim().min(1).describe("the question, e.g. How many rows are there?"),
        tables: z
          .array(TableInputSchema)
          .min(1)
          .describe(
            "the tables: file paths, inline {columns, data}, {csv, name} text, or {upload} ids",
          ),
        graph: z
          .enum(names as [string, ...string[]])
          .default("table_qa")
          .describe("the graph to run (see list_graphs)"),
        configuration: RunSettingsSchema.optional().describe(
          "run settings, e.g. {maxReflections: 1, plans: 4} (docs/configuration.md)",
        ),
      }),
      outputSchema: AskOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async ({ question, tables, graph, configuration }, extra) => {
      const context = callerSettings(configuration);
      const sources = await tableSources(tables);
      const token = extra._meta?.progressToken;
      let step = 0;
      const progress =
        token === undefined
          ? undefined
          : (message: string) => {
              step += 1;
              extra
                .sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: token, progress: step, message },
                })
                // A client that went away misses its progress; the run is stopped by its signal.
                .catch(() => {});
            };
      const state = await runAsk(options.graphs, {
        question,
        sources,
        graph,
        context,
        user: options.user,
        signal: extra.signal,
        progress,
      });
      return asText(jsonResult(state));
    },
  );

  server.registerTool(
    "inspect_table",
    {
      title: "Inspect a table",
      description:
        "Show how a table is read, as the model is told it: its columns and types, the row count, where the header is, the rows taken as titles, totals or notes, and the first rows. A workbook gives one table per sheet.",
      inputSchema: z.object({
        table: TableInputSchema,
        rows: z.number().int().min(0).max(50).default(5).describe("first rows shown"),
        encoding: z.string().min(1).optional().describe("text encoding (default: detected)"),
        ...ReadingSchema.shape,
      }),
      outputSchema: z.object({ tables: z.array(InspectedSchema), warnings: z.array(z.string()) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ table, rows, encoding, ...given }) => {
      const [source] = await tableSources([table]);
      if (!source) throw new Error("no table given");
      const reading = readingOptionsOf({ ...given, rawTables: given.rawTables === true });
      const loaded = await loadTables(source, encoding ? { reading, encoding } : { reading });
      const inspected = [];
      for (const { table: ref } of loaded) {
        inspected.push({
          name: ref.name,
          rows: ref.rows,
          columns: ref.columns.map(({ name, dtype }) => ({ name, dtype })),
          where: whereLines(ref),
          firstRows: await firstRows(ref, rows),
          profile: await profileTable(ref, { sampleRows: rows }),
        });
      }
      const warnings = loaded.flatMap((l) => l.warnings);
      const text = inspected.map((t) => [...t.where, t.profile].join("\n"));
      return {
        content: [
          { type: "text", text: [...warnings.map((w) => `warning: ${w}`), ...text].join("\n\n") },
        ],
        structuredContent: { tables: inspected, warnings },
      };
    },
  );

  server.registerTool(
    "list_graphs",
    {
      title: "List the graphs",
      description: "The graphs ask can run (langgraph.json), with what each does.",
      outputSchema: GraphsOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => ({
      content: [{ type: "text", text: graphLines(graphs).join("\n") }],
      structuredContent: {
        graphs: names.map((name) => ({
          name,
          description: GRAPH_DESCRIPTIONS[name] ?? "",
          spec: graphs[name] ?? "",
        })),
      },
    }),
  );

  return server;
}
