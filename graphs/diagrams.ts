import { graph as mcts } from "./mcts/graph.js";
import { graph as mom } from "./mom/graph.js";
import { graph as orchestrator } from "./orchestrator/graph.js";
import { graph as solve } from "./solve/graph.js";
import { graph as tableQa } from "./table_qa/graph.js";

/*
 * The pictures of the graphs in the docs, drawn by LangGraph from the compiled graphs, so they
 * cannot drift from the wiring. `npm run docs:graphs` rewrites them; a test fails when they differ.
 */

const GRAPHS = { table_qa: tableQa, solve, mom, mcts, orchestrator };

/** Each graph's Mermaid flowchart, as LangGraph draws it (a subgraph is one node). */
export async function drawGraphs(): Promise<Record<string, string>> {
  const drawn: Record<string, string> = {};
  for (const [name, graph] of Object.entries(GRAPHS)) {
    drawn[name] = (await graph.getGraphAsync()).drawMermaid().trim();
  }
  return drawn;
}

const BLOCK = /(<!-- graph:([\w-]+) -->\n```mermaid\n)(?:[\s\S]*?\n)??(```)/g;

/** `markdown` with the block under each `<!-- graph:NAME -->` marker replaced by its drawing. */
export function withDrawings(markdown: string, drawn: Record<string, string>): string {
  return markdown.replace(BLOCK, (whole, open: string, name: string, close: string) => {
    const drawing = drawn[name];
    return drawing === undefined ? whole : `${open}${drawing}\n${close}`;
  });
}

/** The graph names a document has markers for. */
export function markedGraphs(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((m) => m[2] ?? "");
}
