import type { Attempt, Claim, Edge, Evidence, TableRef } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { answerItems, findCells, matchingEvidence } from "../grounding/legacy-items.js";
import { profileTable } from "../tools/tables/profile.js";
import { readTable } from "../tools/tables/read.js";
import { ask, ReplyParseError } from "./llm.js";
import { numberLines, renderEvidenceList, renderPlan } from "./prompts.js";
import { configurationOf, type TableQANode } from "./runtime.js";

export const ANSWERER_SYSTEM = `# tableminds answerer
You state the answer to a question about tables from the results of code that was run
over them. Each result has an id in square brackets.

Reply with two lines:
Final Answer: <the answer>
Evidence: <ids of the results the answer rests on, comma separated>

The answer is as short as possible: a number (no units or thousands separators unless the
question asks for them), a name, a date, Yes or No, or several of these separated by commas.
If the results do not answer the question, say what is missing in the answer line.`;

export function answererPrompt(state: TableQAStateValue, tableSummary: string): string {
  const sections = [`Question: ${state.question}`];
  if (state.plan.length > 0) sections.push(`Plan:\n${renderPlan(state.plan)}`);
  const good = lastSuccessful(state.attempts);
  if (good?.result) {
    sections.push(`Code (${good.id}):\n\`\`\`python\n${numberLines(good.code)}\n\`\`\``);
    sections.push(`Output:\n${good.result.stdout.trim() || "(nothing printed)"}`);
    const own = state.evidence.filter((e) => e.provenance.attempt === good.id);
    if (own.length > 0) sections.push(`Results:\n${renderEvidenceList(own)}`);
  } else {
    sections.push(
      `No code attempt succeeded (${state.attempts.length} tried). Answer from the table below if you can.`,
    );
    sections.push(tableSummary);
  }
  return sections.join("\n\n");
}

export function lastSuccessful(attempts: Attempt[]): Attempt | undefined {
  return attempts.findLast((a) => a.result?.ok);
}

const EVIDENCE_LINE = /^\s*\**\s*evidence\s*\**\s*:\s*\**\s*(.*)$/im;
const MARKER = /\**\s*final\s+answer\s*\**\s*[:：-]\s*\**\s*(.*)$/im;

function tidy(text: string): string {
  return text
    .trim()
    .replace(/^[*`"]+|[*`"]+$/g, "")
    .trim();
}

export interface ParsedAnswer {
  final: string;
  cited: string[];
}

/**
 * The answer line and the cited ids of an answerer reply. Tolerates markdown around
 * the marker and an answer on the line after it; without a marker, a reply of one
 * short line is taken as the answer. Anything else fails.
 */
export function parseAnswer(reply: string): ParsedAnswer {
  const cited = parseCitations(reply);
  const marked = MARKER.exec(reply);
  if (marked) {
    let final = tidy(marked[1] ?? "");
    if (!final) {
      const after = reply.slice((marked.index ?? 0) + marked[0].length).split("\n");
      final = tidy(after.find((line) => line.trim() && !EVIDENCE_LINE.test(line)) ?? "");
    }
    if (final) return { final, cited };
  }
  const lines = reply
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !EVIDENCE_LINE.test(line));
  if (lines.length === 1 && lines[0] && lines[0].length <= 200) {
    return { final: tidy(lines[0]), cited };
  }
  throw new ReplyParseError("answerer", '"Final Answer:" line', reply);
}

function parseCitations(reply: string): string[] {
  const line = EVIDENCE_LINE.exec(reply)?.[1] ?? "";
  const bracketed = [...reply.matchAll(/\[([\w:.-]+)\]/g)].map((m) => m[1] ?? "");
  const listed = line.split(/[,\s]+/).map((id) => id.replace(/^\[|\]$/g, ""));
  return [...new Set([...listed, ...bracketed].filter((id) => /^\w[\w:.-]*$/.test(id)))];
}

/** Source cells holding an answer item, as `cells` evidence. */
export async function cellEvidence(
  final: string,
  tables: TableRef[],
  time: string,
): Promise<Evidence[]> {
  const items = answerItems(final);
  const packets: Evidence[] = [];
  for (const table of tables) {
    const data = await readTable(table);
    for (const hit of findCells(items, data.columns, data.rows)) {
      packets.push({
        id: `${table.name}:r${hit.row}:${hit.column}`,
        modality: "table",
        source: "answer",
        anchor: { kind: "cells", table: table.name, rows: [hit.row], columns: [hit.column] },
        value: hit.value,
        time,
        provenance: { attempt: "source", parents: [] },
        confidence: 1,
      });
    }
  }
  return packets;
}

export const answerNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const good = lastSuccessful(state.attempts);
  const summary = good
    ? ""
    : (await Promise.all(state.tables.map((t) => profileTable(t, { sampleRows: 20 })))).join(
        "\n\n",
      );
  const reply = await ask(
    "answerer",
    ANSWERER_SYSTEM,
    answererPrompt(state, summary),
    config,
    runtime?.signal,
  );
  const parsed = parseAnswer(reply.text);
  const known = new Set(state.evidence.map((e) => e.id));
  const candidates = good ? state.evidence.filter((e) => e.provenance.attempt === good.id) : [];
  let cited = parsed.cited.filter((id) => known.has(id));
  if (cited.length === 0) cited = matchingEvidence(parsed.final, candidates);
  const cells = await cellEvidence(parsed.final, state.tables, new Date().toISOString());
  const evidenceIds = [...cited, ...cells.map((c) => c.id)];
  const claim: Claim = {
    id: "claim:answer",
    text: parsed.final,
    evidence: evidenceIds,
    status: evidenceIds.length > 0 ? "supported" : "unsupported",
  };
  const edges: Edge[] = evidenceIds.map((id) => ({ from: id, to: claim.id, kind: "supports" }));
  return {
    answer: { raw: reply.text, final: parsed.final, evidence: evidenceIds },
    evidence: cells,
    claims: [claim],
    edges,
    budget: reply.budget,
  };
};
