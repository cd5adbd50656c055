/** What each graph of langgraph.json does, for `tableminds graphs` (a graph added later prints none). */
export const GRAPH_DESCRIPTIONS: Readonly<Record<string, string>> = {
  table_qa: "plan, code, run, answer; then check, reflect and retry, and remember (the default)",
  mom: "Mixture-of-Minds: several plans side by side, each coded and answered, then a vote",
  mcts: "tree search over plans, code and answers, within a budget of model calls",
  orchestrator: "subtasks for workers (pandas, sql, calc, lookup), answered from their evidence",
};

/** What `tableminds graphs` prints: each graph and what it does, then where it is defined. */
export function graphLines(graphs: Readonly<Record<string, string>>): string[] {
  const width = Math.max(...Object.keys(graphs).map((name) => name.length));
  return Object.entries(graphs).flatMap(([name, spec]) => [
    `${name.padEnd(width)}  ${GRAPH_DESCRIPTIONS[name] ?? "(no description)"}`,
    `${" ".repeat(width)}  ${spec}`,
  ]);
}
