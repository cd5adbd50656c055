import type { Attempt, Evidence } from "../../../blackboard/schemas.js";
import { lineageParents } from "../../../grounding/evidence.js";
import { SqlError, type SqlResult, sqlEvidence } from "../../../sandbox/duckdb.js";
import { failedSqlAttempt, sqlAttempt } from "../../../sandbox/duckdb-result.js";
import { ReplyParseError } from "../../llm.js";
import { renderTables } from "../../prompts.js";
import { defineWorker, TaskInput, taskWithInputs } from "../worker.js";

export const SQL_SYSTEM = `# tableminds sql
You answer one question about tables by writing a single read-only DuckDB SQL query. Each table
is a SQL table under its own name; quote names that are not plain identifiers with double
quotes. Select exactly the answer: one column, and one row when one value is asked for.
Reply with the query in a \`\`\`sql block and nothing else.`;

const TRIES = 2;
const ANSWER_ROWS = 20;

/** The query of a reply: a \`\`\`sql block, else a reply that is itself a SELECT or WITH. */
export function parseQuery(reply: string): string {
  const fenced = /```(?:sql|duckdb)?\s*\n([\s\S]*?)```/i.exec(reply)?.[1]?.trim();
  if (fenced) return fenced;
  const bare = reply.trim();
  if (/^(select|with)\b/i.test(bare)) return bare;
  throw new ReplyParseError("sql", "SQL query (a ```sql block)", reply);
}

function cellText(value: SqlResult["rows"][number][number]): string {
  return value === null ? "" : String(value);
}

/** The answer a result states: its one column's values, or each row's last value. */
export function answerOfRows(result: SqlResult): string | null {
  if (result.rows.length === 0) return null;
  const rows = result.rows.slice(0, ANSWER_ROWS);
  if (rows.length === 1) return (rows[0] ?? []).map(cellText).join(", ");
  return rows.map((row) => cellText(row.at(-1) ?? null)).join(", ");
}

/**
 * The query's result as evidence, `<attempt>:result` as a pandas run's: its value (the cell,
 * else the rows' text), anchored to the query and the rows it comes from, the source cells
 * its lineage names as parents.
 */
export function sqlResultEvidence(
  attempt: Attempt,
  result: SqlResult,
  time: string,
): Evidence | null {
  const computed = attempt.result?.result;
  if (!computed) return null;
  const table = result.table ?? result.tables.join(", ");
  const rows = computed.lineage.find((l) => l.table === result.table)?.rows ?? [];
  return {
    id: `${attempt.id}:result`,
    modality: "sql",
    source: "sql",
    anchor: { kind: "sql", query: attempt.code, table, rowIds: rows },
    value: computed.values.length === 1 ? (computed.values[0] ?? null) : computed.text,
    time,
    provenance: { attempt: attempt.id, parents: lineageParents(computed.lineage) },
    confidence: 1,
  };
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
      const id = `${kit.id}.q${i}`;
      const started = performance.now();
      try {
        const result = await kit.sql(query);
        const attempt = sqlAttempt(id, query, reply, result);
        const derived = attempt.result?.result;
        trajectory.push(
          `${id}: ${query}`,
          `${result.rows.length} rows; derived from the tables: ${derived?.derived} (${derived?.derivation})`,
        );
        const time = new Date().toISOString();
        const evidence: Evidence[] = [
          ...sqlEvidence(result, query, id, time),
          ...[sqlResultEvidence(attempt, result, time)].filter((e) => e !== null),
        ];
        const answer = answerOfRows(result);
        return {
          answer,
          evidence,
          attempts: [...attempts, attempt],
          trajectory,
          score: answer === null ? 0 : result.truncated ? 0.5 : 0.9,
        };
      } catch (error) {
        if (!(error instanceof SqlError)) throw error;
        attempts.push(failedSqlAttempt(id, query, reply, error, performance.now() - started));
        trajectory.push(`${id}: ${query}`, `failed: ${error.message}`);
        feedback = `\n\nThis query failed:\n\`\`\`sql\n${query}\n\`\`\`\nError: ${error.message}\nWrite a corrected query.`;
      }
    }
    return { answer: null, evidence: [], attempts, trajectory, score: 0 };
  },
});
