import type { GraphNode } from "@langchain/langgraph";
import { STAGES, stageAfter } from "../blackboard/branches.js";
import { addBudget, EMPTY_BUDGET } from "../blackboard/reducers.js";
import type { Branch, Budget, Stage } from "../blackboard/schemas.js";
import type {
  BranchOutput,
  BranchTask,
  BranchTaskValue,
  SolveInputValue,
  SolveOutputValue,
} from "../blackboard/state.js";
import { ruleVerdict } from "../grounding/verdict.js";
import { type Configuration, callerFields } from "../settings/configuration.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "./runtime.js";
import { subrunConfig } from "./subrun.js";

/*
 * One branch of a search over plans, codes and answers: the solve subgraph run from where the
 * parent branch stopped up to the stage the task asks for. The graph hands the compiled solve
 * in (a node does not reach up into graphs/).
 */

/** The compiled solve subgraph, as a branch uses it. */
export interface SolveRunnable {
  invoke(input: Partial<SolveInputValue>, config?: NodeRuntime): Promise<SolveOutputValue>;
}

const START_AFTER = {
  none: "planner",
  plan: "coder",
  code: "answerer",
  answer: "answerer",
} as const;
const STOP_AFTER = { plan: "planner", code: "executor", answer: "answerer" } as const;
/** A stage's model, whose temperature samples it when it branches. */
const ROLE_TEMPERATURE = {
  plan: "plannerTemperature",
  code: "coderTemperature",
  answer: "answererTemperature",
} as const satisfies Record<Stage, keyof Configuration>;

/** Branching samples at 1.0 (as Mixture-of-Minds does), unless a temperature was configured. */
const SAMPLING_TEMPERATURE = 1;

/** The run's context for one branch: its own seed, and its sampled stages' temperatures. */
export function branchContext(
  task: Pick<BranchTaskValue, "seed" | "sampled">,
  config: Configuration,
) {
  const temperatures = Object.fromEntries(
    task.sampled.map((stage) => {
      const key = ROLE_TEMPERATURE[stage];
      return [key, config[key] ?? SAMPLING_TEMPERATURE];
    }),
  );
  return { ...callerFields(config), ...temperatures, seed: (config.seed ?? 0) + task.seed };
}

/** The stages a task runs and the id of the branch each one leaves: `p3`, `p3.c1`, `p3.c1.a1`. */
export function stagesOf(task: Pick<BranchTaskValue, "id" | "parent" | "until">) {
  const prefix = task.parent ? `${task.parent.id}.` : "";
  const segments = task.id.slice(prefix.length).split(".");
  const first = STAGES.indexOf(stageAfter(task.parent?.stage ?? null) ?? task.until);
  return segments.map((_, i) => ({
    stage: STAGES[first + i] ?? task.until,
    id: prefix + segments.slice(0, i + 1).join("."),
  }));
}

/**
 * Grows one branch stage by stage from its parent up to the stage the task asks for, leaving a
 * branch at each stage (a plan, a plan and its code, then the answer), so that a search can grow
 * each of them again. A stage that branches samples at its own temperature; answers are checked
 * by the rules when checking is on.
 */
export async function growBranch(
  solve: SolveRunnable,
  task: BranchTaskValue,
  runtime: NodeRuntime | undefined,
): Promise<{ branches: Branch[]; budget: Budget }> {
  const config = configurationOf(runtime);
  const context = branchContext(task, config);
  const grown: Branch[] = [];
  let parent = task.parent;
  let spent = EMPTY_BUDGET;
  for (const { stage, id } of stagesOf(task)) {
    const solved = await solve.invoke(
      {
        question: task.question,
        tables: task.tables,
        turns: task.turns,
        memories: task.memories,
        plan: parent?.plan ?? [],
        attempts: parent?.attempts ?? [],
        evidence: parent?.evidence ?? [],
        startAt: START_AFTER[parent?.stage ?? "none"],
        stopAfter: STOP_AFTER[stage],
      },
      { ...subrunConfig(runtime), context, metadata: { ...runtime?.metadata, branch: id } },
    );
    const answer = stage === "answer" ? solved.answer : null;
    const verdict =
      answer && config.check
        ? (
            await ruleVerdict({
              question: task.question,
              answer,
              evidence: solved.evidence,
              attempts: solved.attempts,
              tables: task.tables,
              minConfidence: config.minConfidence,
            })
          ).verdict
        : null;
    const branch: Branch = {
      id,
      parent: parent?.id ?? null,
      stage,
      plan: solved.plan,
      attempts: solved.attempts,
      evidence: solved.evidence,
      claims: solved.claims,
      edges: solved.edges,
      answer,
      verdict,
      budget: addBudget(EMPTY_BUDGET, solved.budget),
    };
    grown.push(branch);
    spent = addBudget(spent, solved.budget);
    parent = branch;
  }
  return { branches: grown, budget: spent };
}

/** mom's node for one branch, sent the task by the graph. */
export function branchNode(solve: SolveRunnable) {
  return (async (task, runtime) => growBranch(solve, task, runtime)) satisfies GraphNode<{
    InputSchema: typeof BranchTask;
    OutputSchema: typeof BranchOutput;
    ContextSchema: NodeContext;
  }>;
}
