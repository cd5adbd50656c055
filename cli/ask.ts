import type { Configuration } from "../blackboard/configuration.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { closeSandboxes } from "../tools/sandbox/index.js";
import { loadGraph } from "./graphs.js";
import { describeUpdate } from "./progress.js";
import { jsonResult, renderResult } from "./report.js";

export interface AskOptions {
  tables: string[];
  question: string;
  graph: string;
  json: boolean;
  quiet: boolean;
  context: Partial<Configuration>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Runs one question through a graph, progress to stderr, the result to stdout. */
export async function ask(options: AskOptions): Promise<TableQAStateValue> {
  const graph = await loadGraph(options.graph);
  const input = {
    question: options.question,
    sources: options.tables.map((path) => ({ path })),
  };
  let state: TableQAStateValue | undefined;
  try {
    const stream = await graph.stream(input, {
      streamMode: ["updates", "values"],
      context: options.context,
      recursionLimit: 10 + 4 * (options.context.maxCodeAttempts ?? 3),
    });
    for await (const chunk of stream) {
      if (!Array.isArray(chunk)) continue;
      const [mode, payload] = chunk as [string, unknown];
      if (mode === "values") state = payload as TableQAStateValue;
      if (mode === "updates" && isRecord(payload) && !options.quiet) {
        for (const [node, update] of Object.entries(payload)) {
          const line = isRecord(update) ? describeUpdate(node, update) : null;
          if (line) process.stderr.write(`${line}\n`);
        }
      }
    }
  } finally {
    await closeSandboxes();
  }
  if (!state) throw new Error("the graph produced no state");
  if (options.json) {
    process.stdout.write(`${JSON.stringify(jsonResult(state), null, 2)}\n`);
  } else {
    process.stdout.write(`${await renderResult(state)}\n`);
  }
  return state;
}
