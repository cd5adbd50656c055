/**
 * A wide generated table for the large-table benchmarks, written as CSV by DuckDB (fast, and
 * never held in Node's memory): ids, integers, amounts, cities, names, dates, flags and colours,
 * deterministic per row. Row 654321 holds the name "Zanzibar Quill" in name_3, for questions
 * that name one row.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import type { TableRef } from "../../blackboard/schemas.js";

export const NAMED_ROW = 654321;
export const NAMED_VALUE = "Zanzibar Quill";

export function wideColumns(count: number): { sql: string[]; dtypes: TableRef["columns"] } {
  const sql = ["i AS id"];
  const dtypes: TableRef["columns"] = [{ name: "id", dtype: "int64" }];
  for (let k = 0; sql.length < count; k++) {
    const h = `hash(i, ${k})`;
    const [name, expression, dtype] = [
      [`int_${k}`, `(${h} % 100000)::BIGINT`, "int64"],
      [`amount_${k}`, `round(((${h} % 1000000) / 100.0)::DOUBLE, 2)`, "float64"],
      [`city_${k}`, `'city_' || (${h} % 500)::VARCHAR`, "object"],
      [
        `name_${k}`,
        `CASE WHEN i = ${NAMED_ROW} AND ${k} = 3 THEN '${NAMED_VALUE}' ELSE 'name_' || (${h} % 900000)::VARCHAR END`,
        "object",
      ],
      [`date_${k}`, `(DATE '2000-01-01' + (${h} % 9000)::INT)::VARCHAR`, "object"],
      [`flag_${k}`, `CASE WHEN ${h} % 2 = 0 THEN 'True' ELSE 'False' END`, "bool"],
      [`color_${k}`, `['red', 'green', 'blue', 'amber'][(${h} % 4)::INT + 1]`, "object"],
    ][k % 7] as [string, string, string];
    sql.push(`${expression} AS ${name}`);
    dtypes.push({ name, dtype });
  }
  return { sql, dtypes };
}

/** Writes `rows` x `columns` generated rows to `file` as a comma-separated CSV with a header. */
export async function writeWideCsv(
  file: string,
  rows: number,
  columns = 50,
): Promise<TableRef["columns"]> {
  const { sql, dtypes } = wideColumns(columns);
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT ${sql.join(", ")} FROM range(${rows}) t(i)) TO '${file.replaceAll("'", "''")}' (HEADER, DELIMITER ',')`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return dtypes;
}
