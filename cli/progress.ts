import type { TableQAUpdate } from "../blackboard/state.js";

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** Node names are the labels; the longest sets the column. */
const LABEL_WIDTH = "reflector".length;

/** One progress line for a node's update, as the CLI prints it to stderr, under the node's name. */
export function describeUpdate(node: string, update: TableQAUpdate): string | null {
  const label = node.padEnd(LABEL_WIDTH);
  if (node === "ingest") {
    const tables = Array.isArray(update.tables) ? update.tables : [];
    if (tables.length === 0) return null;
    const list = tables.map((t) => `${t.name} (${t.rows} rows x ${t.columns.length} columns)`);
    return `${label} ${list.join(", ")}`;
  }
  if (node === "planner" && update.plan) {
    return `${label} ${count(update.plan.length, "step")}: ${update.plan.map((s, i) => `${i + 1}. ${s}`).join(" ")}`;
  }
  const attempt = Array.isArray(update.attempts) ? update.attempts.at(-1) : undefined;
  if (node === "coder" && attempt) {
    if (attempt.parseError) return `${label} ${attempt.id}: no code in the reply`;
    return `${label} ${attempt.id}: ${count(attempt.code.split("\n").length, "line")} of python`;
  }
  if (node === "executor" && attempt?.result) {
    const r = attempt.result;
    if (!r.ok) {
      const where = r.error?.line ? ` (line ${r.error.line})` : "";
      return `${label} ${attempt.id} failed: ${r.error?.type}: ${r.error?.message}${where}`;
    }
    const printed = r.stdout.split("\n").filter((l) => l.trim()).length;
    return `${label} ${attempt.id} ok, the code ran ${Math.round(r.durationMs)} ms: ${count(printed, "output line")}, ${count(r.tables.length, "table")}`;
  }
  if (node === "answerer" && update.answer) return `${label} ${update.answer.final}`;
  if (node === "recall" && Array.isArray(update.memories) && update.memories.length > 0) {
    const similar = update.memories.map((m) => m.similarity.toFixed(2)).join(", ");
    return `${label} ${count(update.memories.length, "lesson")} from similar past questions (similarity ${similar})`;
  }
  if (node === "checker" && update.verdict) {
    const v = update.verdict;
    const scores = `type ${v.scores.type}/2, format ${v.scores.format}/2, grounding ${v.scores.grounding}/2`;
    const first = v.issues[0] ? `: ${v.issues[0]}` : "";
    return `${label} ${v.pass ? "passed" : "failed"} (${scores})${v.pass ? "" : first}`;
  }
  const reflection = Array.isArray(update.reflections) ? update.reflections.at(-1) : undefined;
  if (node === "reflector" && reflection) {
    const to = reflection.route === "planner" ? "plan again" : "code again";
    return `${label} ${reflection.id}, ${to}: ${reflection.diagnosis}`;
  }
  if (node === "finalizer" && update.answer && update.verdict) {
    return `${label} no reflection left; the best checked answer: ${update.answer.final}`;
  }
  return null;
}
