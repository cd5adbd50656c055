import { describe, expect, it } from "vitest";
import { decomposerSystem, parseSubtasks, shapeOf } from "../../graphs/orchestrator/decomposer.js";
import pandas from "../../graphs/orchestrator/workers/builtin/pandas.js";
import { defineWorker, TaskInput, z } from "../../graphs/orchestrator/workers/contract.js";
import { subtasksGrammar } from "../../models/local-grammar.js";
import { installedDefaultModel, LocalEnvSchema } from "../../models/local-spec.js";
import { ask } from "../../nodes/llm.js";
import { ensureConfiguration } from "../../settings/configuration.js";

/*
 * The orchestrator's split written by the real embedded model, no stub: whatever workers it
 * picks, the args it writes are the ones each worker's input requires, so no subtask is lost
 * to input that does not fit. (Which worker a 135M model picks is not what is tested.)
 */

const model = installedDefaultModel(LocalEnvSchema.parse(process.env));

const done = async () => ({ answer: null, evidence: [], trajectory: [], score: 0 });
const rowcount = defineWorker({
  name: "rowcount",
  description: "Counts the rows of one table, exactly. Give it `table`, the table's name.",
  input: TaskInput.extend({ table: z.string().describe("the table to count") }),
  run: done,
});
const top = defineWorker({
  name: "top",
  description: "The n largest values of a column. Give it `column` and `n`.",
  input: TaskInput.extend({ column: z.string(), n: z.number().int() }),
  run: done,
});
const WORKERS = [rowcount, top, pandas];

describe("the split on the real local model", () => {
  it.each([
    ["How many rows does the table medals have?", 3],
    ["Which three nations won the most gold medals, and how many rows are there?", 5],
  ])(
    "writes args that fit each chosen worker: %s",
    async (question, seed) => {
      if (!model) throw new Error("The local model is not installed: run `npm run setup`.");
      const config = ensureConfiguration({ model: "local", seed, llmTimeoutMs: 120_000 });
      const reply = await ask(
        "planner",
        decomposerSystem(WORKERS, 3),
        `Question: ${question}\n\nTables: medals (nation, gold, silver, bronze, total)`,
        config,
        undefined,
        {
          speaker: "decomposer",
          grammar: { grammar: subtasksGrammar(WORKERS.map(shapeOf), 3), maxTokens: 384 },
        },
      );
      const subtasks = parseSubtasks(
        reply.text,
        WORKERS.map((w) => w.name),
        3,
      );
      expect(subtasks.length).toBeGreaterThan(0);
      for (const subtask of subtasks) {
        for (const name of subtask.workers) {
          const worker = WORKERS.find((w) => w.name === name);
          const input = worker?.input.safeParse({ ...subtask.args, task: subtask.task });
          expect(input?.success, `${reply.text}`).toBe(true);
        }
      }
    },
    240_000,
  );
});
