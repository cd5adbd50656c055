import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { typedUi } from "@langchain/langgraph-sdk/react-ui/server";
import type { TableRef } from "../blackboard/schemas.js";
import { isServed } from "../settings/operator.js";
import { type AnsweredRun, answerView } from "./answer-view.js";
import { VIEW_NAMES } from "./schemas.js";
import { tableView } from "./table-view.js";

/*
 * Pushing the views as LangGraph's UI messages: onto the run's custom stream (a client sees them
 * as they come) and into the state's `ui` key (a client that loads the thread sees them again).
 * Only a run an API server serves pushes them: a CLI run or an evaluation has no one to show
 * them to, and reading a table's cells for a grid is work it would do for nothing.
 */

/**
 * Whether this run's views have a client to go to: a run of an API server (it has a run id). A
 * served caller that invokes a graph itself (the MCP server) has no one to draw them.
 */
export function showsViews(config: LangGraphRunnableConfig): boolean {
  return isServed() && Boolean(config.metadata?.run_id ?? config.runId);
}

/** The table views of `fresh`, one message each (`table:<name>`), reading `all` for totals. */
export async function pushTableViews(
  config: LangGraphRunnableConfig,
  fresh: readonly TableRef[],
  all: readonly TableRef[],
): Promise<void> {
  if (!showsViews(config) || fresh.length === 0) return;
  const ui = typedUi(config);
  for (const table of fresh) {
    const props = await tableView(table, { tables: all });
    ui.push({ id: `table:${table.name}`, name: VIEW_NAMES.table, props });
  }
}

/** The answer view of the turn (`answer:<turn>`), once the run has an answer. */
export async function pushAnswerView(
  config: LangGraphRunnableConfig,
  run: AnsweredRun,
  turn: number,
): Promise<void> {
  if (!showsViews(config)) return;
  const props = await answerView(run);
  if (!props) return;
  typedUi(config).push({ id: `answer:${turn}`, name: VIEW_NAMES.answer, props });
}
