import type { GraphNode } from "@langchain/langgraph";
import { z } from "zod";
import type { Subtask } from "../../blackboard/schemas.js";
import { subtasksGrammar, type WorkerShape } from "../../models/local-grammar.js";
import { ask, ReplyParseError } from "../../nodes/llm.js";
import {
  promptPrivacy,
  renderConversation,
  renderTableNames,
  renderTables,
} from "../../nodes/prompts.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import type { OrchestratorState } from "./state.js";
import type { Worker } from "./workers/contract.js";
import { loadWorkers, workerDirs } from "./workers/registry.js";

/*
 * The orchestrator's planner: it splits the question into subtasks, each for one or more of the
 * registered workers, with the subtasks each needs first. A reply it cannot use becomes one
 * subtask, the whole question, for the pandas worker: the run goes on.
 */

export const FALLBACK_WORKER = "pandas";

/** A worker as the planner reads it: its name, what it is good for, and any input beyond the task. */
export function describeWorker(worker: Worker): string {
  const schema = z.toJSONSchema(worker.input, { io: "input" }) as {
    properties?: Record<string, { type?: string; description?: string }>;
    required?: string[];
  };
  const fields = Object.entries(schema.properties ?? {}).filter(([key]) => key !== "task");
  const listed = (required: boolean) =>
    fields
      .filter(([key]) => (schema.required ?? []).includes(key) === required)
      .map(([key, p]) => `${key} (${p.type ?? "any"}${p.description ? `: ${p.description}` : ""})`);
  const [needed, optional] = [listed(true), listed(false)];
  const args = [
    needed.length > 0 ? ` Required args: ${needed.join("; ")}.` : "",
    optional.length > 0 ? ` Optional args: ${optional.join("; ")}.` : "",
  ].join("");
  return `- ${worker.name}: ${worker.description}${args}`;
}

/** A worker's name and input, for the grammar an embedded model writes the split in. */
export function shapeOf(worker: Worker): WorkerShape {
  return {
    name: worker.name,
    input: z.toJSONSchema(worker.input, { io: "input" }) as WorkerShape["input"],
  };
}

export function decomposerSystem(workers: Worker[], maxSubtasks: number): string {
  return `# tableminds decomposer
You split a question about tables into subtasks, each solved by one of these workers:
${workers.map(describeWorker).join("\n")}

Reply with one JSON object and nothing else:
{"subtasks": [{"id": "s1", "task": "<a self-contained sub-question>", "workers": ["<worker>"], "dependsOn": [], "args": {}}]}

Use as few subtasks as the question needs: a simple question is one subtask. A subtask that
needs the answer of another lists that one's id in "dependsOn" (it then sees that answer). Give
a subtask two workers when their answers should be cross-checked. The last subtask answers the
whole question. At most ${maxSubtasks} subtasks.`;
}

const Id = z.union([z.string(), z.number()]).transform(String);
const RawSubtask = z.object({
  id: Id.optional(),
  task: z.string().trim().min(1),
  workers: z.array(z.string()).optional(),
  worker: z.string().optional(),
  dependsOn: z.array(Id).optional(),
  depends_on: z.array(Id).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
});
const Reply = z.union([
  z.object({ subtasks: z.array(RawSubtask).min(1) }),
  z.array(RawSubtask).min(1),
]);

function jsonOf(reply: string): unknown {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(reply)?.[1];
  const text = fenced ?? /[[{][\s\S]*[\]}]/.exec(reply)?.[0];
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The subtasks of a reply, made usable: ids unique (s1, s2, ... where missing or repeated),
 * unknown workers dropped (none left: the pandas worker), dependencies only on earlier subtasks
 * (so there is no cycle), at most `max`. A reply with no subtasks fails with a ReplyParseError.
 */
export function parseSubtasks(reply: string, known: string[], max: number): Subtask[] {
  const parsed = Reply.safeParse(jsonOf(reply));
  if (!parsed.success) {
    throw new ReplyParseError("decomposer", 'JSON object with a "subtasks" list', reply);
  }
  const raw = (Array.isArray(parsed.data) ? parsed.data : parsed.data.subtasks).slice(0, max);
  const fallback = known.includes(FALLBACK_WORKER)
    ? FALLBACK_WORKER
    : (known[0] ?? FALLBACK_WORKER);
  const ids: string[] = [];
  const renamed = new Map<string, string>();
  return raw.map((item, i) => {
    const wanted = item.id?.trim();
    const id =
      wanted && /^[\w-]{1,16}$/.test(wanted) && !ids.includes(wanted) ? wanted : `s${i + 1}`;
    if (wanted && !renamed.has(wanted)) renamed.set(wanted, id);
    const named = [...(item.workers ?? []), ...(item.worker ? [item.worker] : [])]
      .map((w) => w.trim().toLowerCase())
      .filter((w) => known.includes(w));
    const deps = [...(item.dependsOn ?? []), ...(item.depends_on ?? [])]
      .map((d) => renamed.get(d.trim()) ?? d.trim())
      .filter((d) => ids.includes(d));
    ids.push(id);
    return {
      id,
      task: item.task,
      workers: named.length > 0 ? [...new Set(named)] : [fallback],
      dependsOn: [...new Set(deps)],
      args: item.args ?? {},
    };
  });
}

/** Subtasks as plan lines, so that everything that shows a plan shows the split. */
export function planOf(subtasks: Subtask[]): string[] {
  return subtasks.map((s) => {
    const after = s.dependsOn.length > 0 ? ` (after ${s.dependsOn.join(", ")})` : "";
    return `${s.id} [${s.workers.join(", ")}] ${s.task}${after}`;
  });
}

export const decomposer = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const workers = [...(await loadWorkers(workerDirs(config))).values()];
  const privacy = await promptPrivacy(state, config);
  const profiles = await renderTables(state.tables, state.question, config);
  const prompt = [
    // On a follow-up its subtasks should be self-contained: the sql worker sees no conversation.
    renderConversation(state.turns, privacy),
    `Question: ${state.question}`,
    renderTableNames(state.tables),
    profiles.join("\n\n"),
  ]
    .filter(Boolean)
    .join("\n\n");
  const reply = await ask(
    "planner",
    decomposerSystem(workers, config.maxSubtasks),
    prompt,
    config,
    runtime?.signal,
    {
      privacy,
      speaker: "decomposer",
      grammar: {
        grammar: subtasksGrammar(workers.map(shapeOf), config.maxSubtasks),
        maxTokens: 384,
      },
    },
  );
  let subtasks: Subtask[];
  try {
    subtasks = parseSubtasks(
      reply.text,
      workers.map((w) => w.name),
      config.maxSubtasks,
    );
  } catch (error) {
    if (!(error instanceof ReplyParseError)) throw error;
    process.emitWarning(
      `${error.message}; solving the whole question with pandas`,
      "TablemindsWarning",
    );
    subtasks = [
      { id: "s1", task: state.question, workers: [FALLBACK_WORKER], dependsOn: [], args: {} },
    ];
  }
  return { subtasks, plan: planOf(subtasks), budget: reply.budget };
}) satisfies GraphNode<typeof OrchestratorState, NodeContext>;
