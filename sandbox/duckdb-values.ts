import {
  DuckDBDecimalValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
} from "@duckdb/node-api";

/** A result cell as JSON can carry it. */
export type SqlCell = string | number | boolean | null;

const TIMESTAMPS = [
  DuckDBTimestampValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
];

/**
 * One DuckDB value as a plain cell: integers as numbers while exact (else their digits),
 * decimals as numbers, dates and timestamps in ISO 8601 form, infinities and NaN as text
 * (JSON has no spelling for them), lists, structs and the rest as DuckDB prints them.
 */
export function plainCell(value: DuckDBValue): SqlCell {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value.toString();
  }
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  const printed = value.toString();
  // DuckDB prints `2024-01-02 03:04:05`; ISO puts a `T` between date and time.
  if (TIMESTAMPS.some((type) => value instanceof type)) return printed.replace(" ", "T");
  return printed;
}
