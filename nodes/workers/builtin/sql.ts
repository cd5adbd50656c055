import type { Evidence } from "../../../blackboard/schemas.js";
import { SqlError, type SqlResult, sqlEvidence } from "../../../tools/sandbox/duckdb.js";
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
  throw new ReplyParseError("coder", "SQL query (a ```sql block)", reply);
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

/** DuckDB over the tables: one SELECT written by the model, rewritten once when it fails. */
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
    let feedback = "";
    for (let i = 1; i <= TRIES; i++) {
      const query = parseQuery(await kit.ask("coder", SQL_SYSTEM, base + feedback));
      const attempt = `${kit.id}.q${i}`;
      try {
        const result = await kit.sql(query);
        trajectory.push(`${attempt}: ${query}`, `${result.rows.length} rows`);
        const evidence: Evidence[] = sqlEvidence(result, query, attempt, new Date().toISOString());
        const answer = answerOfRows(result);
        return {
          answer,
          evidence,
          trajectory,
          score: answer === null ? 0 : result.truncated ? 0.5 : 0.9,
        };
      } catch (error) {
        if (!(error instanceof SqlError)) throw error;
        trajectory.push(`${attempt}: ${query}`, `failed: ${error.message}`);
        feedback = `\n\nThis query failed:\n\`\`\`sql\n${query}\n\`\`\`\nError: ${error.message}\nWrite a corrected query.`;
      }
    }
    return { answer: null, evidence: [], trajectory, score: 0 };
  },
});
