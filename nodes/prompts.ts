import type { Attempt, Evidence, Memory, Reflection, TableRef } from "../blackboard/schemas.js";
import type { Turn } from "../blackboard/turns.js";
import type { Configuration } from "../settings/configuration.js";
import { tableContexts } from "../tables/context.js";
import {
  OPEN_PRIVACY,
  type PromptPrivacy,
  privacyOf,
  privateTableContexts,
} from "../tables/privacy.js";

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
 * What the prompts of a run may show of its tables (tables/privacy.ts): every node that
 * builds a prompt asks for it and hands it to `ask`, which scrubs the prompt with it.
 */
export function promptPrivacy(
  run: { tables: readonly TableRef[]; question: string },
  config: Pick<Configuration, "privacy">,
): Promise<PromptPrivacy> {
  return privacyOf(run, config.privacy);
}

/**
 * Each table as a prompt shows it, within the run's token budget for tables: whole when it
 * fits, else its statistics and the rows the question names (tables/context.ts). Under a
 * privacy mode, its columns with their types (and, for `values`, aggregates) only.
 */
export async function renderTables(
  tables: TableRef[],
  question: string,
  config: Pick<Configuration, "contextTokens" | "sampleRows"> &
    Partial<Pick<Configuration, "privacy">>,
): Promise<string[]> {
  const mode = config.privacy ?? "off";
  if (mode !== "off") return privateTableContexts(tables, mode, config.contextTokens);
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
export function renderErrorHistory(attempts: Attempt[], privacy = OPEN_PRIVACY): string {
  const failed = attempts.filter((a) => a.parseError || (a.result && !a.result.ok));
  return failed
    .map((attempt) => {
      const raised = attempt.result?.error;
      const error = attempt.parseError
        ? `no runnable code: ${attempt.parseError}`
        : `${privacy.error(raised ?? { type: "Error", message: "the code failed" }, attempt.code)}` +
          (raised?.line ? ` (line ${raised.line})` : "");
      const stdout = attempt.result ? privacy.outputBeforeFailing(attempt.result) : "";
      return [
        `Attempt ${attempt.id}:`,
        "```python",
        numberLines(attempt.code),
        "```",
        stdout ? `Its output before failing:\n${stdout}` : "",
        `Error: ${error}`,
      ]
        .filter(Boolean)
        .join("\n");
    })
    .join("\n\n");
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
export function renderEvidenceList(evidence: Evidence[], privacy = OPEN_PRIVACY): string {
  return evidence.map((e) => `[${e.id}] ${describeAnchor(e)}: ${privacy.value(e)}`).join("\n");
}

/**
 * The latest reflection as prompt text for the planner or coder, or "" when there is none. A
 * diagnosis built here from the checker's notes (no model wrote it) is a note like them.
 */
export function renderReflection(reflections: Reflection[], privacy = OPEN_PRIVACY): string {
  const last = reflections.at(-1);
  if (!last) return "";
  const answer =
    privacy.mode === "off"
      ? JSON.stringify(last.verdict.answer)
      : privacy.answer(last.verdict.answer);
  const ours = (notes: string[]) => (last.byModel ? notes : privacy.notes(notes));
  const diagnosis = ours([last.diagnosis])[0];
  const steps = ours(last.improvement)
    .map((step, i) => `${i + 1}. ${step}`)
    .join("\n");
  return [
    `An earlier answer (${answer}) was rejected by the checker.`,
    diagnosis ? `Diagnosis: ${diagnosis}` : "",
    steps ? `Do this differently:\n${steps}` : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/**
 * The thread's earlier turns as a prompt section, or "" on a first question: each question and
 * its answer, and the tables its code left, which later code has as DataFrames of those names.
 */
export function renderConversation(turns: Turn[], privacy = OPEN_PRIVACY): string {
  if (turns.length === 0) return "";
  const blocks = turns.map((turn, i) => {
    const answer =
      turn.answer === null
        ? "(no answer)"
        : turn.passed === false
          ? `${privacy.answer(turn.answer)} (it did not pass its check)`
          : privacy.answer(turn.answer);
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

/**
 * Recalled memories as a planner prompt section, or "" when there are none. Under a privacy
 * mode a past question shows with its values masked, and lessons and pitfalls are notes.
 */
export function renderMemories(memories: Memory[], privacy = OPEN_PRIVACY): string {
  if (memories.length === 0) return "";
  const blocks = memories.map((m, i) => {
    const question = privacy.mode === "off" ? m.question : m.pattern;
    const lines = [`${i + 1}. A similar question (${m.episodes} seen): ${question}`];
    if (m.plan.length > 0)
      lines.push(`   Plan that worked: ${m.plan.map((s, j) => `(${j + 1}) ${s}`).join(" ")}`);
    for (const lesson of privacy.notes(m.lessons)) lines.push(`   Lesson: ${lesson}`);
    for (const pitfall of privacy.notes(m.pitfalls)) lines.push(`   Pitfall: ${pitfall}`);
    return lines.join("\n");
  });
  return `Lessons from similar past questions (use what applies; the table may differ):\n${blocks.join("\n")}`;
}

/** Store namespaces may not contain "." or ":"; a user's name for one may. */
