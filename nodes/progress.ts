import { z } from "zod";
import {
  BallotSchema,
  BranchSchema,
  PacketSchema,
  SelectionSchema,
  SubtaskSchema,
  TreeNodeSchema,
} from "../blackboard/schemas.js";
import type { TableQAUpdate } from "../blackboard/state.js";
import { type EventSink, emit } from "./events.js";

function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** Node names are the labels; the longest sets the column. */
export const LABEL_WIDTH = "decomposer".length;

const SearchUpdateSchema = z.object({
  branches: z.array(BranchSchema).optional(),
  ballot: BallotSchema.nullable().optional(),
  tree: z.array(TreeNodeSchema).optional(),
});

/** A branch's line: what its last stage left (a plan, a run, an answer and its check). */
function describeBranch(label: string, grown: z.infer<typeof BranchSchema>[]): string | null {
  const last = grown.at(-1);
  if (!last) return null;
  if (last.stage === "plan")
    return `${label} ${last.id} planned ${count(last.plan.length, "step")}`;
  if (last.stage === "code") {
    const run = last.attempts.at(-1)?.result;
    return `${label} ${last.id} ${run?.ok ? "ran" : "failed to run"} its code`;
  }
  const check = last.verdict ? ` (check ${last.verdict.pass ? "passed" : "failed"})` : "";
  return `${label} ${last.id} answered ${last.answer?.final ?? "nothing"}${check}`;
}

/** The lines of mom's and mcts's own nodes: branches as they finish, the vote, the pick. */
function describeSearch(node: string, label: string, update: object): string | null {
  const parsed = SearchUpdateSchema.safeParse(update);
  if (!parsed.success) return null;
  const { branches, ballot, tree } = parsed.data;
  if (node === "branch" && branches) return describeBranch(label, branches);
  if ((node === "vote" || node === "judge") && ballot) {
    const top = ballot.tally.find((t) => t.branches.includes(ballot.winner ?? ""));
    const answered = ballot.tally.reduce((n, t) => n + t.branches.length, 0);
    const how =
      ballot.method === "judge"
        ? `won ${count(ballot.matches.filter((m) => m.winner === ballot.winner).length, "match")}`
        : `${top?.branches.length ?? 0} of ${answered} branches (weight ${top?.weight ?? 0})`;
    return `${label} ${ballot.answer ?? "no answer"}: ${ballot.winner ?? "no branch"}, ${how}`;
  }
  if (node === "search" && tree) {
    const root = tree.find((n) => n.id === "root");
    const grown = branches?.length ?? 0;
    return root
      ? `${label} ${count(grown, "branch", "branches")} grown, ${count(root.visits, "answer")} backed up`
      : null;
  }
  return null;
}

const OrchestratorUpdateSchema = z.object({
  subtasks: z.array(SubtaskSchema).optional(),
  packets: z.array(PacketSchema).optional(),
  dispatching: z.array(z.object({ subtask: z.string(), worker: z.string() })).optional(),
  round: z.number().optional(),
  claims: z.array(z.object({ status: z.string() })).optional(),
  selection: SelectionSchema.nullable().optional(),
});

function describePacket(packet: z.infer<typeof PacketSchema>): string {
  if (packet.answer !== null)
    return `${packet.id} answered ${packet.answer} (score ${packet.score.toFixed(2)})`;
  return `${packet.id}: ${packet.error ?? "no answer"}`;
}

/** The lines of the orchestrator's own nodes: the split, each round, each packet, the choice. */
function describeOrchestration(node: string, label: string, update: object): string | null {
  const parsed = OrchestratorUpdateSchema.safeParse(update);
  if (!parsed.success) return null;
  const { subtasks, packets, dispatching, round, claims, selection } = parsed.data;
  if (node === "decomposer" && subtasks) {
    const parts = subtasks.map(
      (s) =>
        `${s.id} [${s.workers.join(", ")}]${s.dependsOn.length ? ` after ${s.dependsOn.join(", ")}` : ""}`,
    );
    return `${label} ${count(subtasks.length, "subtask")}: ${parts.join("; ")}`;
  }
  if (node === "dispatcher") {
    const lines = (packets ?? []).map((p) => `${label} ${describePacket(p)}`);
    if (dispatching && dispatching.length > 0) {
      const sent = dispatching.map((d) => `${d.subtask}.${d.worker}`).join(", ");
      lines.push(`${label} round ${round ?? "?"}: ${sent}`);
    }
    return lines.length > 0 ? lines.join("\n") : null;
  }
  if (node === "worker" && packets?.[0]) return `${label} ${describePacket(packets[0])}`;
  if (node === "weigher" && claims) {
    const conflicted = claims.filter((c) => c.status === "conflicted").length;
    return `${label} ${count(claims.length, "claim")}, ${conflicted} in conflict`;
  }
  if (node === "selector" && selection) {
    const kept = selection.packets.join(", ") || "nothing";
    const coverage = `${Math.round(selection.coverage * 100)}% covered`;
    const disputes = selection.conflicts.map(
      (c) => `${c.subtask} disputed (${c.answers.join(" vs ")}), kept ${c.kept ?? "neither"}`,
    );
    return `${label} kept ${kept} (${[coverage, ...disputes].join("; ")})`;
  }
  return null;
}

/** Namespaces of runs inside a branch or a worker, whose own line says it all. */
const INNER = ["branch:", "search:", "worker:"];

/** Whether a stream chunk comes from inside a branch of mom or mcts, or an orchestrator worker. */
export function insideBranch(namespace: readonly string[]): boolean {
  return namespace.some((part) => INNER.some((prefix) => part.startsWith(prefix)));
}

/**
 * A node that reports its progress: after it returns, the line its update makes (or none) goes
 * to the run's custom stream as a `progress` event, the one path every watcher reads (the CLI,
 * the MCP server, Studio, the SDK).
 */
export function reported<State, Runtime extends EventSink | undefined, Update>(
  name: string,
  node: (state: State, runtime: Runtime) => Update | Promise<Update>,
): (state: State, runtime: Runtime) => Promise<Update> {
  return async (state, runtime) => {
    const update = await node(state, runtime);
    if (!runtime?.writer) return update;
    const plain = typeof update === "object" && update !== null && !Array.isArray(update);
    const line = plain && update.constructor === Object ? progressLine(name, update) : null;
    emit(runtime, { event: "progress", node: name, line });
    return update;
  };
}

/** The nodes whose lines read mom's, mcts's or the orchestrator's keys (parsed only for them). */
const SEARCH_NODES = new Set(["branch", "vote", "judge", "search"]);
const ORCHESTRATION_NODES = new Set(["decomposer", "dispatcher", "worker", "weigher", "selector"]);

/** One progress line for a node's update, under the node's name, as the CLI prints it. */
export function progressLine(node: string, update: TableQAUpdate): string | null {
  const label = node.padEnd(LABEL_WIDTH);
  if (SEARCH_NODES.has(node)) return describeSearch(node, label, update);
  if (ORCHESTRATION_NODES.has(node)) return describeOrchestration(node, label, update);
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
    const lines = `${count(attempt.code.split("\n").length, "line")} of python`;
    if (attempt.query)
      return `${label} ${attempt.id}: query ${attempt.query.replace(/\n/g, "; ")} (${lines})`;
    return `${label} ${attempt.id}: ${lines}`;
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
  if ((node === "best" || node === "composer") && update.answer) {
    return `${label} ${update.answer.final}`;
  }
  return null;
}
