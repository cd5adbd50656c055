import { describe, expect, it } from "vitest";
import { READER_LIMITS, readerLimit } from "../../settings/limits.js";
import { tableLimit } from "../../tables/errors.js";
import { uploadLimitBytes } from "../../tables/sources.js";

describe("the reader's limits, declared once", () => {
  it("gives each limit its default when its variable is unset or blank", () => {
    for (const [name, limit] of Object.entries(READER_LIMITS)) {
      expect(readerLimit(name as keyof typeof READER_LIMITS, {})).toEqual({
        value: limit.fallback,
      });
      expect(readerLimit(name as keyof typeof READER_LIMITS, { [limit.variable]: "  " })).toEqual({
        value: limit.fallback,
      });
    }
  });

  it("takes a whole number within bounds, and refuses anything else in one line", () => {
    expect(readerLimit("xlsxMaxCells", { TABLEMINDS_XLSX_MAX_CELLS: " 12 " })).toEqual({
      value: 12,
    });
    for (const bad of ["0", "-1", "2.5", "lots", "1e400"]) {
      const setting = readerLimit("xlsxMaxCells", { TABLEMINDS_XLSX_MAX_CELLS: bad });
      expect(setting).toEqual({
        problem: `TABLEMINDS_XLSX_MAX_CELLS is ${JSON.stringify(bad)}; set it to a whole number above 0 (the default is 5000000)`,
      });
    }
    // The line limit has a ceiling: DuckDB cannot read gigabyte lines.
    expect(
      readerLimit("maxLineBytes", { TABLEMINDS_MAX_LINE_BYTES: String(64 * 1024 * 1024) }),
    ).toEqual({
      value: 64 * 1024 * 1024,
    });
    expect(
      readerLimit("maxLineBytes", { TABLEMINDS_MAX_LINE_BYTES: String(64 * 1024 * 1024 + 1) }),
    ).toHaveProperty("problem");
  });

  it("is a load error of the file being read when refused", () => {
    expect(() =>
      tableLimit("parquetMaxCells", "t.parquet", { TABLEMINDS_PARQUET_MAX_CELLS: "x" }),
    ).toThrow(/^cannot load table t\.parquet: TABLEMINDS_PARQUET_MAX_CELLS is "x"/);
    expect(tableLimit("parquetMaxCells", "t.parquet", {})).toBe(50_000_000);
  });

  it("stops a server with a bad upload limit rather than fall back to the default", () => {
    expect(uploadLimitBytes({})).toBe(256 * 1024 * 1024);
    expect(uploadLimitBytes({ TABLEMINDS_UPLOAD_MAX_MB: "3" })).toBe(3 * 1024 * 1024);
    expect(() => uploadLimitBytes({ TABLEMINDS_UPLOAD_MAX_MB: "3MB" })).toThrow(
      /^TABLEMINDS_UPLOAD_MAX_MB is "3MB"; set it to a whole number above 0/,
    );
  });
});
