import type { GraphNode } from "@langchain/langgraph";
import type { Packet } from "../../blackboard/schemas.js";
import { packetId, unanswered } from "../../blackboard/subtasks.js";
import { answerDerived } from "../../grounding/verify.js";
import { ModelCallError } from "../../models/errors.js";
import type { SolveRunnable } from "../../nodes/branch.js";
import { ConfigurationError, configurationOf, type NodeContext } from "../../nodes/runtime.js";
import type { WorkerOutput, WorkerTask, WorkerTaskValue } from "./state.js";
import { makeKit } from "./workers/kit.js";
import { loadWorkers, workerDirs } from "./workers/registry.js";

/*
 * One subtask for one worker: the worker is looked up in the registry, its input checked against
 * its own schema, and what it returns becomes a packet on the blackboard. A worker that fails
 * (bad input, unusable reply, a query that would not run, a bug) leaves a packet saying so; a
 * model endpoint that fails, a bad configuration or a cancelled run stop the run instead, as in
 * every other graph, so that no endpoint failure is recorded as a worker's wrong answer.
 */

function mustStop(error: unknown, signal?: AbortSignal): boolean {
  return (
    error instanceof ModelCallError ||
    error instanceof ConfigurationError ||
    Boolean(signal?.aborted)
  );
}

export function workerNode(solve: SolveRunnable) {
  return (async (task: WorkerTaskValue, runtime) => {
    const config = configurationOf(runtime);
    const id = packetId(task.subtask.id, task.worker);
    const base = { id, subtask: task.subtask.id, worker: task.worker };
    const failed = (error: string, cost?: Packet["cost"]) =>
      unanswered(task.subtask.id, task.worker, error, cost);
    const registry = await loadWorkers(workerDirs(config));
    const worker = registry.get(task.worker);
    if (!worker) {
      const known = [...registry.keys()].join(", ");
      return { packets: [failed(`no worker named "${task.worker}" (registered: ${known})`)] };
    }
    const input = worker.input.safeParse({ ...task.subtask.args, task: task.subtask.task });
    if (!input.success) {
      const problems = input.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
      return { packets: [failed(`its input does not fit ${worker.name}: ${problems.join("; ")}`)] };
    }
    const { kit, spent, close } = makeKit({
      id,
      worker: worker.name,
      question: task.question,
      tables: task.tables,
      turns: task.turns,
      inputs: task.inputs,
      config,
      solve,
      runtime,
    });
    const started = performance.now();
    const cost = () => ({ llmCalls: spent().llmCalls, ms: performance.now() - started });
    try {
      const result = await worker.run(input.data, kit);
      const posted = new Set(result.evidence.map((e) => e.id));
      const cited = (result.cited ?? [...posted]).filter((e) => posted.has(e));
      const answer = result.answer?.trim() ? result.answer.trim() : null;
      const packet: Packet = {
        ...base,
        answer,
        evidence: cited,
        trajectory: result.trajectory,
        score: Math.min(Math.max(result.score, 0), 1),
        derived: await answerDerived(answer, result.attempts ?? [], task.subtask.task),
        cost: cost(),
        error: answer ? null : "the worker found no answer",
      };
      return {
        packets: [packet],
        attempts: result.attempts ?? [],
        evidence: result.evidence,
        budget: spent(),
      };
    } catch (error) {
      if (mustStop(error, runtime?.signal)) throw error;
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { packets: [failed(message, cost())], budget: spent() };
    } finally {
      await close();
    }
  }) satisfies GraphNode<{
    InputSchema: typeof WorkerTask;
    OutputSchema: typeof WorkerOutput;
    ContextSchema: NodeContext;
  }>;
}
