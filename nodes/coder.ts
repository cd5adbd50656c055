import type { GraphNode } from "@langchain/langgraph";
import { nextAttemptId } from "../blackboard/attempts.js";
import type { Attempt } from "../blackboard/schemas.js";
import type { SolveState } from "../blackboard/state.js";
import { expectedAnswerType } from "../grounding/answer-type.js";
import { compileQuery, describeQuery } from "../models/query/compile.js";
import { parseQuery, QueryParseError, queryText } from "../models/query/language.js";
import {
  type QueryAnswer,
  type QueryTable,
  queryTableOf,
  renderAnswer,
  renderNamed,
  renderQueryTable,
} from "../models/query/table.js";
import { OPEN_PRIVACY } from "../tables/privacy.js";
import { readTable } from "../tables/read.js";
import { coderDialect, dataTables } from "./dialect.js";
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

export const QUERY_SYSTEM = `# tableminds query
You answer a question about a table by writing one query over its columns.
Reply with one \`\`\`query block and nothing else.

A query is \`result = <measure>\`, or two measures and arithmetic on them:
a = <measure>
b = <measure>
result = a - b
Measures:
- sum, mean, median, min or max of a number column: \`sum points\`
- how many rows: \`count rows\`
- the values of a column: \`value name\`
- the row with the largest (top) or smallest (bottom) number: \`top name by points\`, the first
  three: \`top 3 name by points\`, by group totals: \`top team by sum points\`
Any measure may keep only some rows: \`where games > 10 and team is "Red"\` (numbers: = != > >=
< <=; text: is, is not, contains). Use the columns' exact names.

Examples for a table with the columns name, team (text) and points, games (numbers):
Question: How many points did the players score in all?
The answer is a number.
\`\`\`query
result = sum points
\`\`\`
Question: Which player scored the most points?
The answer is a name.
\`\`\`query
result = top name by points
\`\`\`
Question: Which player scored 30 points?
The answer is a name.
Named in the question: points = 30
\`\`\`query
result = value name where points = 30
\`\`\`
Question: How many players of the Red team played more than 10 games?
The answer is a number.
Named in the question: team is "Red"
\`\`\`query
result = count rows where team is "Red" and games > 10
\`\`\`
Question: How many more points did Ann score than Bob?
The answer is a number.
Named in the question: name is "Ann", name is "Bob"
\`\`\`query
a = value points where name is "Ann"
b = value points where name is "Bob"
result = a - b
\`\`\``;

/** The query coder's temperature after a failed or rejected attempt (unless one is configured). */
export const QUERY_RETRY_TEMPERATURE = 0.7;

/** What kind of result the query must give, when the question's expected answer says. */
export function queryAnswerOf(question: string): { answer?: QueryAnswer } {
  const expected = expectedAnswerType(question);
  if (expected === "number") return { answer: "number" };
  if (expected === "entity") return { answer: "name" };
  return {};
}

/**
 * The query coder's prompt: the table's columns as the grammar knows them (a small model does
 * better without the rows themselves, and reads the prompt faster), the question.
 */
export function queryPrompt(parts: {
  table: QueryTable;
  question: string;
  errorHistory: string;
  reflection?: string;
}): string {
  return [
    renderQueryTable(parts.table),
    parts.reflection ?? "",
    parts.errorHistory ? `Earlier attempts failed:\n\n${parts.errorHistory}` : "",
    [`Question: ${parts.question}`, renderAnswer(parts.table), renderNamed(parts.table)]
      .filter(Boolean)
      .join("\n"),
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** Earlier queries that failed to read or to run, one line each. */
export function renderQueryHistory(attempts: Attempt[], privacy = OPEN_PRIVACY): string {
  return attempts
    .filter((a) => a.parseError || (a.result && !a.result.ok))
    .map((a) => {
      const what = a.query ?? a.raw.replace(/\s+/g, " ").slice(0, 200);
      const why =
        a.parseError ?? privacy.error(a.result?.error ?? { type: "Error", message: "" }, a.code);
      return `- ${what}: ${why}`;
    })
    .join("\n");
}

/**
 * A query's reply as an attempt (the pandas it compiles to, or why it is no query) and, when it
 * is one, its steps in words as the plan.
 */
export function queryAttempt(
  id: string,
  reply: string,
  table: QueryTable,
  frame = "df",
): { attempt: Attempt; plan?: string[] } {
  try {
    const query = parseQuery(reply, table);
    const code = compileQuery(query, frame);
    const attempt = {
      id,
      code,
      raw: reply,
      result: null,
      parseError: null,
      query: queryText(reply),
    };
    return { attempt, plan: describeQuery(query) };
  } catch (error) {
    if (!(error instanceof QueryParseError)) throw error;
    const parseError = new ReplyParseError(
      "query",
      `query of this table (${error.message})`,
      reply,
    );
    return { attempt: { id, code: "", raw: reply, result: null, parseError: parseError.message } };
  }
}

export const coder = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const privacy = await promptPrivacy(state, config);
  const id = nextAttemptId(state.attempts);
  const first = dataTables(state.tables)[0];
  if (first && coderDialect(config, state.tables) === "query") {
    const rows = config.privacy === "off" ? (await readTable(first)).rows : [];
    const table = {
      ...queryTableOf(first.columns, rows, state.question),
      ...queryAnswerOf(state.question),
    };
    // At temperature 0 a retry would write the same query again: it samples instead.
    const retry = state.attempts.length > 0 && config.coderTemperature === undefined;
    const reply = await ask(
      "coder",
      QUERY_SYSTEM,
      queryPrompt({
        table,
        question: state.question,
        errorHistory: renderQueryHistory(state.attempts, privacy),
        reflection: renderReflection(state.reflections, privacy),
      }),
      retry ? { ...config, coderTemperature: QUERY_RETRY_TEMPERATURE } : config,
      runtime?.signal,
      { metadata: { attempt: id }, privacy, speaker: "query" },
    );
    // `df` is the first table; the data table goes by its own name when it is not.
    const frame = first === state.tables[0] ? "df" : first.name;
    const { attempt, plan } = queryAttempt(id, reply.text, table, frame);
    return { attempts: [attempt], budget: reply.budget, ...(plan ? { plan } : {}) };
  }
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
