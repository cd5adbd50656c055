/*
 * The table reader's limits an operator may raise from the environment, declared once: each
 * one's variable, default and ceiling. The reader asks for a limit by name and turns a refused
 * setting into its own error, naming the file it was reading.
 */

type Env = Readonly<Record<string, string | undefined>>;

const MB = 1024 * 1024;

export interface ReaderLimitSpec {
  variable: string;
  fallback: number;
  /** The most the setting may say. */
  ceiling?: number;
  /** What it bounds, as docs/configuration.md says it. */
  does: string;
  readBy: string;
}

export const READER_LIMITS = {
  maxLineBytes: {
    variable: "TABLEMINDS_MAX_LINE_BYTES",
    fallback: 8 * MB,
    // DuckDB fails to allocate its buffers for lines of gigabytes.
    ceiling: 64 * MB,
    does: "bytes one line of a CSV or TSV file may have, else the file is refused naming the line",
    readBy: "the text table reader (`tables/line-limits.ts`) and DuckDB's reads of stored tables",
  },
  xlsxMaxBytes: {
    variable: "TABLEMINDS_XLSX_MAX_BYTES",
    // SheetJS holds two to three times as much while reading.
    fallback: 256 * MB,
    does: "bytes a workbook's parts may unzip to in all, else it is refused as a bomb",
    readBy: "the workbook reader (`tables/xlsx-limits.ts`)",
  },
  xlsxMaxCells: {
    variable: "TABLEMINDS_XLSX_MAX_CELLS",
    fallback: 5_000_000,
    does: "cells a workbook's sheets may hold, or be read over, else it is refused",
    readBy: "the workbook reader",
  },
  parquetMaxCells: {
    variable: "TABLEMINDS_PARQUET_MAX_CELLS",
    fallback: 50_000_000,
    does: "cells (rows times columns, from the file's metadata) a Parquet file may hold, else it is refused",
    readBy: "the Parquet reader (`tables/parquet.ts`)",
  },
  parquetMaxBytes: {
    variable: "TABLEMINDS_PARQUET_MAX_BYTES",
    fallback: 512 * MB,
    does: "bytes of text a Parquet file's values may decode to, else it is refused as a bomb",
    readBy: "the Parquet reader",
  },
  uploadMaxMb: {
    variable: "TABLEMINDS_UPLOAD_MAX_MB",
    fallback: 256,
    does: "the largest table file an upload may send, in MB; another value stops the server",
    readBy: "the API server's `POST /tables`",
  },
} as const satisfies Record<string, ReaderLimitSpec>;

export type ReaderLimit = keyof typeof READER_LIMITS;

/** A limit's value, or the one line that says why its setting is refused. */
export type LimitSetting = { value: number } | { problem: string };

/** The limit in force: its variable when set to a whole number within bounds, else the default. */
export function readerLimit(name: ReaderLimit, env: Env = process.env): LimitSetting {
  const limit: ReaderLimitSpec = READER_LIMITS[name];
  const raw = env[limit.variable];
  if (raw === undefined || raw.trim() === "") return { value: limit.fallback };
  const value = Number(raw);
  const ceiling = limit.ceiling ?? Number.MAX_SAFE_INTEGER;
  if (Number.isInteger(value) && value > 0 && value <= ceiling) return { value };
  const range = limit.ceiling === undefined ? "above 0" : `from 1 to ${limit.ceiling}`;
  return {
    problem: `${limit.variable} is ${JSON.stringify(raw)}; set it to a whole number ${range} (the default is ${limit.fallback})`,
  };
}
