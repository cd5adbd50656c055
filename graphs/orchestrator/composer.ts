import type { GraphNode } from "@langchain/langgraph";
import type { Packet, Selection, Subtask } from "../../blackboard/schemas.js";
import { finalSubtasks } from "../../blackboard/subtasks.js";
import { claimsFrom, verifyGrounding } from "../../grounding/verify.js";
import { parseAnswer } from "../../nodes/final-answer.js";
import { ask, ReplyParseError } from "../../nodes/llm.js";
import { promptPrivacy, renderEvidenceList } from "../../nodes/prompts.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import { OPEN_PRIVACY, type PromptPrivacy } from "../../tables/privacy.js";
import type { OrchestratorState, OrchestratorStateValue } from "./state.js";

/*
 * The orchestrator's answer: when one subtask answers the question and its workers agree, its
 * answer is the answer (no model call); otherwise a model composes it from the selected
 * findings, shown with any disagreement between workers. Either way the answer cites the
 * selected evidence and what grounding traces its items to.
 */

export const COMPOSER_SYSTEM = `# tableminds composer
You answer a question about tables from what workers found for its parts. Each finding shows
its evidence ids in square brackets. Where workers disagree, both findings are shown: weigh
them by their evidence, and state nothing the findings do not support.

Reply with two lines:
Final Answer: <the answer>
Evidence: <ids of the evidence the answer rests on, comma separated>

The answer is as short as possible: a number, a name, a date, Yes or No, or several of these
separated by commas.`;

const MAX_EVIDENCE_SHOWN = 40;

function finding(subtask: Subtask, packets: Packet[], privacy: PromptPrivacy): string {
  const lines = packets.map(
    (p) =>
      `  ${p.worker}: ${p.answer === null ? `no answer (${privacy.notes([p.error ?? "unknown"])[0] ?? "a reason kept here"})` : privacy.answer(p.answer)}` +
      (p.evidence.length > 0 ? ` [${p.evidence.slice(0, 8).join(", ")}]` : ""),
  );
  return [`${subtask.id}: ${subtask.task}`, ...lines].join("\n");
}

export function composerPrompt(
  state: Pick<OrchestratorStateValue, "question" | "subtasks" | "packets" | "evidence">,
  selection: Selection,
  privacy = OPEN_PRIVACY,
): string {
  const chosen = new Set(selection.packets);
  const disputed = new Set(selection.conflicts.map((c) => c.subtask));
  const shown = (s: Subtask) =>
    state.packets.filter((p) => p.subtask === s.id && (chosen.has(p.id) || disputed.has(s.id)));
  const findings = state.subtasks.map((s) => finding(s, shown(s), privacy));
  const cited = new Set(
    state.packets
      .filter((p) => chosen.has(p.id) || disputed.has(p.subtask))
      .flatMap((p) => p.evidence),
  );
  const evidence = state.evidence.filter((e) => cited.has(e.id)).slice(0, MAX_EVIDENCE_SHOWN);
  const sections = [`Question: ${state.question}`, `Findings:\n${findings.join("\n")}`];
  if (selection.conflicts.length > 0) {
    const notes = selection.conflicts.map(
      (c) =>
        `${c.subtask}: ${c.packets.map((p, i) => `${p} says ${privacy.mode === "off" ? JSON.stringify(c.answers[i]) : privacy.answer(c.answers[i])}`).join(", ")}`,
    );
    sections.push(`Workers disagree:\n${notes.join("\n")}`);
  }
  if (evidence.length > 0) sections.push(`Evidence:\n${renderEvidenceList(evidence, privacy)}`);
  if (privacy.mode !== "off") {
    sections.push(
      "Values marked as kept on this machine can still be the answer: write the evidence id in square brackets (Final Answer: [<id>]) and it is filled in here.",
    );
  }
  return sections.join("\n\n");
}

/** The answer a lone final subtask gives when its chosen workers agree, else null. */
function settledAnswer(
  state: Pick<OrchestratorStateValue, "subtasks" | "packets">,
  selection: Selection,
): string | null {
  const finals = finalSubtasks(state.subtasks);
  const only = finals.length === 1 ? finals[0] : undefined;
  if (!only || selection.conflicts.some((c) => c.subtask === only.id)) return null;
  const chosen = state.packets.find(
    (p) => p.subtask === only.id && selection.packets.includes(p.id),
  );
  return chosen?.answer ?? null;
}

export const composer = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const selection = state.selection;
  const finals = new Set(finalSubtasks(state.subtasks).map((s) => s.id));
  const chosen = state.packets.filter((p) => selection?.packets.includes(p.id));
  // Without an answer to a step that answers the question, earlier steps answer something else.
  if (!selection || !chosen.some((p) => finals.has(p.subtask))) return { answer: null };
  let raw: string;
  let final = settledAnswer(state, selection);
  let modelCited: string[] = [];
  let budget = {};
  if (final !== null) {
    raw = final;
  } else {
    const privacy = await promptPrivacy(state, config);
    const reply = await ask(
      "answerer",
      COMPOSER_SYSTEM,
      composerPrompt(state, selection, privacy),
      config,
      runtime?.signal,
      { privacy, speaker: "composer" },
    );
    budget = reply.budget;
    raw = reply.text;
    try {
      const parsed = parseAnswer(reply.text);
      // Evidence the model named by its id, not seeing its value, is filled in here.
      final = privacy.fillAnswer(parsed.final, state.evidence);
      modelCited = parsed.cited;
    } catch (error) {
      if (!(error instanceof ReplyParseError)) throw error;
      // The answerer's parser read it; the composer spoke.
      const told = new ReplyParseError("composer", error.expected, error.reply);
      final = chosen
        .filter((p) => finals.has(p.subtask))
        .map((p) => p.answer)
        .join(", ");
      process.emitWarning(
        `${told.message}; answering with the final subtasks' answers`,
        "TablemindsWarning",
      );
    }
  }
  const selected = chosen.flatMap((p) => p.evidence);
  const grounding = await verifyGrounding({
    answer: final,
    evidence: state.evidence,
    attempts: state.attempts,
    tables: state.tables,
    question: state.question,
    cited: [...modelCited, ...selected],
    source: "composer",
  });
  const { claims, edges } = claimsFrom(final, grounding.checks);
  const known = new Set(state.evidence.map((e) => e.id));
  const traced = grounding.checks.flatMap((check) => check.supports);
  const cited = [...new Set([...modelCited, ...selected, ...traced])].filter(
    (id) => known.has(id) || traced.includes(id),
  );
  return {
    answer: { raw, final, evidence: cited },
    evidence: grounding.cells,
    claims,
    edges,
    budget,
  };
}) satisfies GraphNode<typeof OrchestratorState, NodeContext>;
