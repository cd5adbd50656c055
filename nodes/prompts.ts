import type { Configuration } from "../blackboard/configuration.js";
import type { Attempt, Evidence, Memory, Reflection, TableRef } from "../blackboard/schemas.js";
import type { Turn } from "../blackboard/turns.js";
import { tableContexts } from "../tools/tables/context.js";

/** Prefixes each line with its 1-based number, as evidence anchors count them. */
export function numberLines(code: string): string {
  const lines = code.split("\n");
  const width = String(lines.length).length;
  return lines.map((line, i) => `${String(i + 1).padStart(width)} | ${line}`).join("\n");
}

export function renderPlan(plan: string[]): string {
  return plan.map((step, i) => `${i + 1}. ${step}`).join("\n");
}

/**
 * Each table as a prompt shows it, within the run's token budget for tables: whole when it
 * fits, else its statistics and the rows the question names (tools/tables/context.ts).
 */
export async function renderTables(
  tables: TableRef[],
  question: string,
  config: Pick<Configuration, "contextTokens" | "sampleRows">,
): Promise<string[]> {
  const contexts = await tableContexts(tables, question, {
    budgetTokens: config.contextTokens,
    sampleRows: config.sampleRows,
  });
  return contexts.map((context) => context.text);
}

/** How each table is reached from the generated code. */
export function renderTableNames(tables: TableRef[]): string {
  if (tables.length === 1 && tables[0]) {
    return `The table is loaded as the DataFrame \`df\` (also \`${tables[0].name}\`).`;
  }
  const names = tables.map((t) => `\`${t.name}\``).join(", ");
  return `The tables are loaded as DataFrames named ${names}; \`df\` is the first, \`${tables[0]?.name}\`.`;
}

/** Earlier failed attempts, newest last, so the coder does not repeat a mistake. */
export function renderErrorHistory(attempts: Attempt[]): string {
  const failed = attempts.filter((a) => a.parseError || (a.result && !a.result.ok));
  return failed
    .map((attempt) => {
      const error = attempt.parseError
        ? `no runnable code: ${attempt.parseError}`
        : `${attempt.result?.error?.type}: ${attempt.result?.error?.message}` +
          (attempt.result?.error?.line ? ` (line ${attempt.result.error.line})` : "");
      const stdout = attempt.result?.stdout.trim();
      return [
        `Attempt ${attempt.id}:`,
        "```python",
        numberLines(attempt.code),
        "```",
        stdout ? `Its output before failing:\n${stdout.slice(0, 1000)}` : "",
        `Error: ${error}`,
      ]
        .filter(Boolean)
        .join("\n");
    })
    .join("\n\n");
}

function describeValue(value: Evidence["value"]): string {
  if (value !== null && typeof value === "object") {
    const cols = value.columns.map((c) => c.name).join(", ");
    return `table \`${value.name}\` (${value.rows} rows; columns ${cols})`;
  }
  return JSON.stringify(value);
}

function describeAnchor(evidence: Evidence): string {
  const anchor = evidence.anchor;
  switch (anchor.kind) {
    case "code":
      return anchor.lines[0] === anchor.lines[1]
        ? `code line ${anchor.lines[0]}`
        : `code lines ${anchor.lines[0]}-${anchor.lines[1]}`;
    case "cells":
      return `table ${anchor.table}, rows ${anchor.rows.join(", ")}, columns ${anchor.columns.join(", ")}`;
    case "sql":
      return `SQL over ${anchor.table}, rows ${anchor.rowIds.join(", ")}`;
    case "text":
      return `${anchor.source} [${anchor.span[0]}, ${anchor.span[1]})`;
  }
}

/** One line per evidence packet: `[id] where: value`, the ids the answerer cites. */
export function renderEvidenceList(evidence: Evidence[]): string {
  return evidence
    .map((e) => `[${e.id}] ${describeAnchor(e)}: ${describeValue(e.value)}`)
    .join("\n");
}

/** The latest reflection as prompt text for the planner or coder, or "" when there is none. */
export function renderReflection(reflections: Reflection[]): string {
  const last = reflections.at(-1);
  if (!last) return "";
  const steps = last.improvement.map((step, i) => `${i + 1}. ${step}`).join("\n");
  return [
    `An earlier answer (${JSON.stringify(last.verdict.answer)}) was rejected by the checker.`,
    `Diagnosis: ${last.diagnosis}`,
    steps ? `Do this differently:\n${steps}` : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/**
 * The thread's earlier turns as a prompt section, or "" on a first question: each question and
 * its answer, and the tables its code left, which later code has as DataFrames of those names.
 */
export function renderConversation(turns: Turn[]): string {
  if (turns.length === 0) return "";
  const blocks = turns.map((turn, i) => {
    const answer =
      turn.answer === null
        ? "(no answer)"
        : turn.passed === false
          ? `${turn.answer} (it did not pass its check)`
          : turn.answer;
    const lines = [`${i + 1}. Question: ${turn.question}`, `   Answer: ${answer}`];
    if (turn.tables.length > 0) {
      const names = turn.tables.map((t) => `\`${t.name}\``).join(", ");
      lines.push(`   Tables its code left (loaded as DataFrames): ${names}`);
    }
    return lines.join("\n");
  });
  return [
    "Earlier in this conversation (the question below may refer to it: read it as a follow-up):",
    ...blocks,
  ].join("\n");
}

/** Recalled memories as a planner prompt section, or "" when there are none. */
export function renderMemories(memories: Memory[]): string {
  if (memories.length === 0) return "";
  const blocks = memories.map((m, i) => {
    const lines = [`${i + 1}. A similar question (${m.episodes} seen): ${m.question}`];
    if (m.plan.length > 0)
      lines.push(`   Plan that worked: ${m.plan.map((s, j) => `(${j + 1}) ${s}`).join(" ")}`);
    for (const lesson of m.lessons) lines.push(`   Lesson: ${lesson}`);
    for (const pitfall of m.pitfalls) lines.push(`   Pitfall: ${pitfall}`);
    return lines.join("\n");
  });
  return `Lessons from similar past questions (use what applies; the table may differ):\n${blocks.join("\n")}`;
}

/** Store namespaces may not contain "." or ":"; a user's name for one may. */
