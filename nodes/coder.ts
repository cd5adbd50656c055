import type { GraphNode } from "@langchain/langgraph";
import { nextAttemptId } from "../blackboard/attempts.js";
import type { Attempt } from "../blackboard/schemas.js";
import type { SolveState } from "../blackboard/state.js";
import { ask, ReplyParseError } from "./llm.js";
import {
  promptPrivacy,
  renderConversation,
  renderErrorHistory,
  renderPlan,
  renderReflection,
  renderTableNames,
  renderTables,
} from "./prompts.js";
import { configurationOf, type NodeContext } from "./runtime.js";

export const CODER_SYSTEM = `# tableminds coder
You write Python that computes the answer to a question about tables, following a plan.
The tables are already loaded as pandas DataFrames; pandas is imported as pd and numpy as np.
Do not read or write files and do not use the network.

Rules:
- Reply with exactly one \`\`\`python code block and nothing after it.
- Compute the answer from the tables and assign it to a variable named \`result\` (a number,
  a string, a bool, a list, or a Series/DataFrame of the rows that answer): it is captured as
  the answer's evidence, and it counts only when it is computed from the tables, never typed in.
- Keep each intermediate result in a DataFrame with a meaningful name (for example
  \`by_year = df.groupby("year")["sales"].sum().reset_index()\`): these are shown as evidence.
- Leave out rows that are not data before aggregating: totals, subtotals, averages and notes.
- print() the values the answer needs, one per line, labelled (for example
  \`print("total:", total)\`), and print the result last.
- Clean values before computing when needed (numbers stored as text, thousands separators,
  percent signs, missing values).
- For a chart, draw on a new figure of your own (\`fig, ax = plt.subplots()\`, import
  matplotlib.pyplot as plt), call \`plt.show()\` at the end, print nothing, and do not wrap the
  drawing in functions that rely on names defined outside them.`;

export function coderPrompt(parts: {
  question: string;
  profiles: string[];
  tableNames: string;
  /** The thread's earlier questions and answers, on a follow-up question. */
  conversation?: string;
  plan: string[];
  errorHistory: string;
  /** The reflector's diagnosis of an earlier rejected answer, when there is one. */
  reflection?: string;
}): string {
  const sections = [
    parts.profiles.join("\n\n"),
    parts.tableNames,
    parts.conversation ?? "",
    `Question: ${parts.question}`,
    parts.plan.length > 0 ? `Plan:\n${renderPlan(parts.plan)}` : "",
    parts.reflection ?? "",
    parts.errorHistory
      ? `Earlier attempts failed. Fix the cause; do not repeat them.\n\n${parts.errorHistory}`
      : "",
  ];
  return sections.filter(Boolean).join("\n\n");
}

const FENCE = /```[ \t]*([\w+-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;

/**
 * The code of a coder reply: the ```python blocks joined in order (models often split one
 * program into several), else any fenced block, else a reply that is code with no prose.
 */
export function parseCode(reply: string): string {
  const blocks = [...reply.matchAll(FENCE)].map((m) => ({
    lang: (m[1] ?? "").toLowerCase(),
    code: (m[2] ?? "").replace(/\s+$/, ""),
  }));
  const python = blocks.filter((b) => (b.lang === "python" || b.lang === "py") && b.code.trim());
  const chosen = python.length > 0 ? python : blocks.filter((b) => b.lang === "" && b.code.trim());
  if (chosen.length > 0) return chosen.map((b) => b.code).join("\n");
  if (looksLikeBareCode(reply)) return reply.trim();
  throw new ReplyParseError("coder", "```python code block", reply);
}

function looksLikeBareCode(reply: string): boolean {
  const lines = reply.split("\n").filter((line) => line.trim());
  if (lines.length === 0 || reply.includes("```")) return false;
  const codeLike = /^(\s|#|import |from |print\(|[A-Za-z_][\w.[\]"', ]*\s*[-+*/]?=|for |if |def )/;
  return lines.every((line) => codeLike.test(line)) && /print\(/.test(reply);
}

export const coder = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const privacy = await promptPrivacy(state, config);
  const profiles = await renderTables(state.tables, state.question, config);
  const prompt = coderPrompt({
    question: state.question,
    profiles,
    tableNames: renderTableNames(state.tables),
    conversation: renderConversation(state.turns, privacy),
    plan: state.plan,
    errorHistory: renderErrorHistory(state.attempts, privacy),
    reflection: renderReflection(state.reflections, privacy),
  });
  const id = nextAttemptId(state.attempts);
  const reply = await ask("coder", CODER_SYSTEM, prompt, config, runtime?.signal, {
    metadata: { attempt: id },
    privacy,
  });
  let attempt: Attempt;
  try {
    attempt = { id, code: parseCode(reply.text), raw: reply.text, result: null, parseError: null };
  } catch (error) {
    if (!(error instanceof ReplyParseError)) throw error;
    attempt = { id, code: "", raw: reply.text, result: null, parseError: error.message };
  }
  return { attempts: [attempt], budget: reply.budget };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
