import type { GraphNode } from "@langchain/langgraph";
import type { IngestState } from "../blackboard/state.js";
import { sandboxIndexer } from "../sandbox/frame-indexer.js";
import { getSandbox } from "../sandbox/index.js";
import { operatorSettings } from "../settings/operator.js";
import type { FrameIndexer } from "../tables/frame-index.js";
import { loadTables } from "../tables/load.js";
import type { ReadingOptions } from "../tables/reading.js";
import { allowedSource, assertStoredTable } from "../tables/sources.js";
import { loadTokenizer } from "../tables/tokens.js";
import { pushTableViews } from "../views/push.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "./runtime.js";

/** How the run's configuration says files are read (`--raw`, `--header-rows`, ...). */
export function readingOptionsOf(config: {
  rawTables: boolean;
  headerRows?: number | undefined;
  skipRows?: number | undefined;
  sheet?: string | undefined;
  locale?: string | undefined;
}): ReadingOptions {
  const options: ReadingOptions = {};
  if (config.rawTables) options.raw = true;
  if (config.headerRows !== undefined) options.headerRows = config.headerRows;
  if (config.skipRows !== undefined) options.skipRows = config.skipRows;
  if (config.sheet !== undefined) options.sheet = config.sheet;
  if (config.locale !== undefined) options.locale = config.locale;
  return options;
}

/** Time for the request to reach the sandbox before the tokenizer takes the event loop. */
const TOKENIZER_DELAY_MS = 100;

/**
 * A large CSV is parsed once, by the local sandbox, which keeps the DataFrame for the code and
 * indexes it; Node only copies and checks the file. A large table's prompts are cut to their
 * budget by token count: the tokenizer (a second of CPU) loads while the sandbox works.
 */
function localIndexer(memoryMb: number): FrameIndexer {
  const indexer = sandboxIndexer(() => getSandbox("local"), { memoryMb });
  return {
    index(table) {
      const indexed = indexer.index(table);
      setTimeout(() => loadTokenizer().catch(() => {}), TOKENIZER_DELAY_MS).unref();
      return indexed;
    },
  };
}

/**
 * Turns the run's `sources` (file paths, uploads or inline rows) into table references: one per
 * CSV/TSV/JSON/Parquet file or inline table, one per sheet of a workbook.
 * Tables passed in directly are kept; a run with neither, or with no question, fails here,
 * clearly, before any model is asked anything. A path must be under the operator's table roots
 * and a ready-made table must be in the artifact store (tables/sources.ts).
 */
export const ingest = (async (state, runtime: NodeRuntime) => {
  // A caller of the API server may send no question at all.
  if (!state.question?.trim()) {
    throw new Error("the question is empty: ask something about the table");
  }
  for (const table of state.tables) assertStoredTable(table);
  if (state.sources.length === 0) {
    if (state.tables.length === 0) {
      throw new Error(
        "no tables: give `sources` (file paths or inline {columns, data}) or `tables`",
      );
    }
    return {};
  }
  const policy = operatorSettings();
  // Every source is checked before any is read.
  const allowed = state.sources.map((source) => allowedSource(source, policy));
  const loaded = [];
  const config = configurationOf(runtime);
  const reading = readingOptionsOf(config);
  const indexer = config.sandbox === "local" ? localIndexer(config.execMemoryMb) : undefined;
  for (const [i, source] of allowed.entries()) {
    // An upload is loaded as itself, so that its tables are cited by the name it came under.
    const given = state.sources[i];
    const read = given && "upload" in given ? given : source;
    loaded.push(...(await loadTables(read, indexer ? { reading, indexer } : { reading })));
  }
  const known = new Set(state.tables.map((t) => t.sha256 + t.name));
  const fresh = loaded.map((l) => l.table).filter((t) => !known.has(t.sha256 + t.name));
  for (const warning of loaded.flatMap((l) => l.warnings)) {
    process.emitWarning(warning, "TablemindsWarning");
  }
  const tables = [...state.tables, ...fresh];
  await pushTableViews(runtime, fresh, tables);
  return { tables };
}) satisfies GraphNode<typeof IngestState, NodeContext>;
