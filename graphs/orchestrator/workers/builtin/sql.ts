import type { Attempt } from "../../../../blackboard/schemas.js";
import { ReplyParseError } from "../../../../nodes/llm.js";
import { renderTables } from "../../../../nodes/prompts.js";
import { SqlError } from "../../../../sandbox/duckdb.js";
import { failedSqlAttempt } from "../../../../sandbox/duckdb-result.js";
import { defineWorker, TaskInput, taskWithInputs } from "../contract.js";

export const SQL_SYSTEM = `# tableminds sql
You answer one question about tables by writing a single read-only DuckDB SQL query. Each table
is a SQL table under its own name; quote names that are not plain identifiers with double
quotes. Select exactly the answer: one column, and one row when one value is asked for.
Reply with the query in a \`\`\`sql block and nothing else.`;

const TRIES = 2;

/** The query of a reply: a \`\`\`sql block, else a reply that is itself a SELECT or WITH. */
export function parseQuery(reply: string): string {
  const fenced = /```(?:sql|duckdb)?\s*\n([\s\S]*?)```/i.exec(reply)?.[1]?.trim();
  if (fenced) return fenced;
  const bare = reply.trim();
  if (/^(select|with)\b/i.test(bare)) return bare;
  throw new ReplyParseError("sql", "SQL query (a ```sql block)", reply);
}

/**
 * DuckDB over the tables: one SELECT written by the model, rewritten once when it fails. Each
 * query is an attempt (`<subtask>.sql.q1`, ...) whose result the sandbox re-ran on perturbed
 * copies of the tables, so the checker can tell a computed answer from a literal one.
 */
export default defineWorker({
  name: "sql",
  description:
    "Writes and runs one read-only DuckDB SQL query over the tables (joins across them " +
    "included) and answers with its result; each result row is evidence tied to its source " +
    "row. Good for exact lookups, filters, counts, sums and joins; not for free-text reasoning.",
  input: TaskInput,
  async run({ task }, kit) {
    const profiles = await renderTables(kit.tables, task, kit.config);
    const base = `Tables:\n${profiles.join("\n\n")}\n\nQuestion: ${taskWithInputs(task, kit.inputs)}`;
    const trajectory: string[] = [];
    const attempts: Attempt[] = [];
    let feedback = "";
    for (let i = 1; i <= TRIES; i++) {
      const reply = await kit.ask("coder", SQL_SYSTEM, base + feedback);
      const query = parseQuery(reply);
      const started = performance.now();
      try {
        const found = await kit.findBySql(query, reply);
        const [attempt] = found.attempts;
        const derived = attempt?.result?.result;
        trajectory.push(
          `${attempt?.id}: ${query}`,
          `${found.result.rows.length} rows; derived from the tables: ${derived?.derived} (${derived?.derivation})`,
        );
        return {
          ...found,
          attempts: [...attempts, ...found.attempts],
          trajectory,
          score: found.answer === null ? 0 : found.result.truncated ? 0.5 : 0.9,
        };
      } catch (error) {
        if (!(error instanceof SqlError)) throw error;
        const id = `${kit.id}.q${i}`;
        attempts.push(failedSqlAttempt(id, query, reply, error, performance.now() - started));
        trajectory.push(`${id}: ${query}`, `failed: ${error.message}`);
        feedback = `\n\nThis query failed:\n\`\`\`sql\n${query}\n\`\`\`\nError: ${error.message}\nWrite a corrected query.`;
      }
    }
    return { answer: null, evidence: [], attempts, trajectory, score: 0 };
  },
});
