import { z } from "zod";
import {
  type Attempt,
  type Evidence,
  SelectionSchema,
  type Verdict,
} from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { numberLines } from "../nodes/prompts.js";
import { renderTable } from "../tools/tables/profile.js";
import { readTable } from "../tools/tables/read.js";
import { JSON_FIELDS } from "./json-fields.js";

function indent(text: string, by = "    "): string {
  return text
    .split("\n")
    .map((line) => by + line)
    .join("\n");
}

function codeLines(attempt: Attempt | undefined, [from, to]: [number, number]): string {
  if (!attempt || from <= 0) return "";
  const numbered = numberLines(attempt.code).split("\n");
  return numbered.slice(from - 1, to).join("\n");
}

async function describeEvidence(e: Evidence, attempts: Attempt[]): Promise<string> {
  const anchor = e.anchor;
  if (anchor.kind === "code") {
    const attempt = attempts.find((a) => a.id === anchor.attempt);
    const code = codeLines(attempt, anchor.lines);
    if (e.value !== null && typeof e.value === "object") {
      const data = await readTable(e.value);
      const preview = renderTable(data.columns, data.rows, { maxRows: 5, rowNumbers: true });
      return `[${e.id}] table \`${e.value.name}\`, ${e.value.rows} rows, made by:\n${indent(code)}\n${indent(preview)}`;
    }
    const output = attempt?.result?.stdout.slice(anchor.stdout[0], anchor.stdout[1]) ?? "";
    return `[${e.id}] output ${JSON.stringify(output)} printed by:\n${indent(code)}`;
  }
  if (anchor.kind === "cells") {
    return `[${e.id}] cell of ${anchor.table}: row ${anchor.rows.join(", ")}, column ${anchor.columns.join(", ")} = ${JSON.stringify(e.value)}`;
  }
  if (anchor.kind === "sql") {
    return `[${e.id}] SQL over ${anchor.table} (rows ${anchor.rowIds.join(", ")}):\n${indent(anchor.query)}`;
  }
  return `[${e.id}] ${anchor.source}: ${JSON.stringify(e.value)}`;
}

/** The human-readable result: the answer, then each piece of evidence it cites. */
export async function renderResult(state: TableQAStateValue): Promise<string> {
  const answer = state.answer;
  if (!answer) return "No answer was produced.";
  const byId = new Map(state.evidence.map((e) => [e.id, e]));
  const cited = answer.evidence.flatMap((id) => byId.get(id) ?? []);
  const parts = [answerLine(answer.final, state.verdict), ""];
  if (state.verdict) parts.push(describeVerdict(state.verdict), "");
  const disputes = conflictsOf(state);
  if (disputes) parts.push(disputes, "");
  if (cited.length === 0) {
    parts.push("Evidence: none found for this answer.");
  } else {
    parts.push("Evidence:");
    for (const e of cited) parts.push(indent(await describeEvidence(e, state.attempts), "  "));
  }
  return parts.join("\n");
}

const Orchestrated = z.object({ selection: SelectionSchema.nullable() });

/** Where an orchestrator's workers disagreed: each answer, and which one the answer kept. */
function conflictsOf(state: object): string | null {
  const parsed = Orchestrated.safeParse(state);
  const conflicts = parsed.success ? (parsed.data.selection?.conflicts ?? []) : [];
  if (conflicts.length === 0) return null;
  const lines = conflicts.map((c) => {
    const said = c.packets.map((p, i) => `${p} said ${JSON.stringify(c.answers[i])}`).join(", ");
    return `  - ${c.subtask}: ${said}; kept ${c.kept ?? "neither"}`;
  });
  return ["Workers disagreed:", ...lines].join("\n");
}

/** The answer, or, when the run is not sure of it, its best candidate said as such. */
function answerLine(final: string, verdict: Verdict | null): string {
  if (!verdict || verdict.sure) return `Answer: ${final}`;
  return `Not sure. Best candidate: ${final} (confidence ${verdict.confidence.toFixed(2)})`;
}

const SUPPORT_WORDS: Record<Verdict["support"], string> = {
  derived: "derived from the code's result",
  "looked-up": "looked up in the cells the question names",
  coincidental: "the value only occurs in the table or output (no support)",
  none: "nothing supports it",
};

function describeVerdict(verdict: Verdict): string {
  const { type, format, grounding } = verdict.scores;
  const scores = `type ${type}/2, format ${format}/2, grounding ${grounding}/2`;
  const head = `Check: ${verdict.pass ? "passed" : "FAILED"} (${scores}; by ${verdict.by})`;
  const support = `Support: ${SUPPORT_WORDS[verdict.support]}; confidence ${verdict.confidence.toFixed(2)}`;
  return [head, ...verdict.issues.map((issue) => `  - ${issue}`), support].join("\n");
}

/** The `--json` shape. */
export function jsonResult(state: TableQAStateValue): Record<string, unknown> {
  return Object.fromEntries(JSON_FIELDS.map((field) => [field, state[field]]));
}
