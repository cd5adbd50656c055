import { namespaced } from "../../../blackboard/namespaces.js";
import { addBudget, EMPTY_BUDGET } from "../../../blackboard/reducers.js";
import type { Budget, TableRef } from "../../../blackboard/schemas.js";
import type { Turn } from "../../../blackboard/turns.js";
import type { SolveRunnable } from "../../../nodes/branch.js";
import { ask } from "../../../nodes/llm.js";
import { promptPrivacy } from "../../../nodes/prompts.js";
import type { NodeRuntime } from "../../../nodes/runtime.js";
import { subrunConfig } from "../../../nodes/subrun.js";
import { DuckDbSql } from "../../../sandbox/duckdb.js";
import { getSandbox } from "../../../sandbox/index.js";
import type { Configuration } from "../../../settings/configuration.js";
import type { WorkerInput, WorkerKit } from "./contract.js";
import { codeFinding, sqlFinding } from "./findings.js";

export interface KitParts {
  id: string;
  /** The worker's name: the source its evidence names. */
  worker: string;
  question: string;
  tables: TableRef[];
  /** The thread's earlier turns, for a follow-up question. */
  turns?: Turn[];
  inputs: WorkerInput[];
  config: Configuration;
  solve: SolveRunnable;
  runtime?: NodeRuntime;
}

/** A worker's kit, and what its calls cost; `close` releases the SQL engine if one was opened. */
export function makeKit(parts: KitParts): {
  kit: WorkerKit;
  spent: () => Budget;
  close: () => Promise<void>;
} {
  const { config, runtime, tables } = parts;
  let budget = EMPTY_BUDGET;
  const spend = (cost: Partial<Budget>) => {
    budget = addBudget(budget, cost);
  };
  let engine: Promise<DuckDbSql> | null = null;
  let queries = 0;
  let runs = 0;
  // Earlier subtasks' answers reach a worker's prompts only as the run's privacy shows them.
  const privacy = promptPrivacy({ tables, question: parts.question }, config);
  privacy.catch(() => {}); // its failure is reported where it is awaited
  const answers = parts.inputs.map((input) => input.answer);
  const shown = async (text: string) => (await privacy).shownAnswers(text, answers);
  const kit: WorkerKit = {
    id: parts.id,
    question: parts.question,
    tables,
    inputs: parts.inputs,
    config,
    signal: runtime?.signal,
    async solve(question) {
      const solved = await parts.solve.invoke(
        { question: await shown(question), tables, turns: parts.turns },
        subrunConfig(runtime),
      );
      spend(solved.budget);
      const renamed = namespaced(parts.id, solved);
      const answer = solved.answer && {
        ...solved.answer,
        evidence: solved.answer.evidence.map(renamed.evidenceId),
      };
      return { ...solved, attempts: renamed.attempts, evidence: renamed.evidence, answer };
    },
    async ask(role, system, user) {
      const reply = await ask(role, system, await shown(user), config, runtime?.signal, {
        privacy: await privacy,
        speaker: parts.worker,
      });
      spend(reply.budget);
      return reply.text;
    },
    async run(code) {
      const started = performance.now();
      const sandbox = await getSandbox(config.sandbox);
      try {
        return await sandbox.execute({
          code,
          tables,
          timeoutMs: config.execTimeoutMs,
          memoryMb: config.execMemoryMb,
          outputBytes: config.outputBytes,
        });
      } finally {
        spend({ execMs: performance.now() - started });
      }
    },
    async findBySql(query, raw = query) {
      const id = `${parts.id}.q${++queries}`;
      return sqlFinding(id, query, raw, await kit.sql(query), parts.worker);
    },
    async findByCode(code, raw = code) {
      const id = `${parts.id}.a${++runs}`;
      return codeFinding(id, code, raw, await kit.run(code), parts.worker);
    },
    async sql(query) {
      engine ??= DuckDbSql.open(tables, { timeoutMs: config.execTimeoutMs });
      const started = performance.now();
      try {
        return await (await engine).query(query, { derive: true });
      } finally {
        spend({ execMs: performance.now() - started });
      }
    },
  };
  return {
    kit,
    spent: () => budget,
    close: async () => {
      if (engine) await (await engine.catch(() => null))?.close();
    },
  };
}
