import { describe, expect, it } from "vitest";
import { TableLoadError } from "../../tables/errors.js";
import {
  DEFAULT_MAX_LINE_BYTES,
  duckDbLineOptions,
  duckDbMaxLineSize,
  LineLengths,
  maxLineBytes,
  rejectLongLines,
} from "../../tables/line-limits.js";

function refusal(bytes: Uint8Array, max: number): TableLoadError {
  try {
    rejectLongLines(bytes, "/data/wide.csv", max);
  } catch (error) {
    if (error instanceof TableLoadError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("LineLengths", () => {
  it("finds the first line past the limit and measures it to its end, across pieces", () => {
    const lines = new LineLengths(10);
    for (const piece of ["short\r", "\nalso short\n", "0123456", "789ABCDEF", "\r\nnext\n"]) {
      lines.push(Buffer.from(piece));
    }
    expect(lines.found).toEqual({ line: 3, bytes: 16, ended: true });
  });

  it("counts CR, LF and CRLF as one line break each, a CRLF split between pieces included", () => {
    const lines = new LineLengths(3);
    for (const piece of ["a\r", "\nb\rc\n", "d\r\n", "toolong"]) lines.push(Buffer.from(piece));
    expect(lines.found).toEqual({ line: 5, bytes: 7, ended: false });
  });

  it("finds nothing when every line fits", () => {
    const lines = new LineLengths(4);
    lines.push(Buffer.from("abcd\nefgh\r\nijkl"));
    expect(lines.found).toBeNull();
  });
});

describe("rejectLongLines", () => {
  it("refuses a file of one long line in one line naming the file", () => {
    const error = refusal(Buffer.alloc(3 * 1024 * 1024, "y"), 1024 * 1024);
    expect(error.message).toBe(
      "cannot load table /data/wide.csv: refused: line 1 is 3 MB long (the file has no line break), " +
        "past the 1 MB a line of a table may be (one record a line: is it a table?); " +
        "raise TABLEMINDS_MAX_LINE_BYTES to read it",
    );
  });

  it("names the line of a long record after a header", () => {
    const text = `a,b\n1,2\n3,${"z".repeat(2 * 1024 * 1024)}\n5,6\n`;
    expect(refusal(Buffer.from(text), 1024 * 1024).problem).toMatch(
      /^refused: line 3 is 2 MB long, past/,
    );
  });

  it("says what binary bytes are rather than measuring their lines", () => {
    const bytes = Buffer.alloc(4096, 0);
    expect(refusal(bytes, 100).problem).toMatch(/looks like a binary file/);
  });

  it("lets short lines through", () => {
    expect(() => rejectLongLines(Buffer.from("a,b\n1,2\n"), "t.csv", 4)).not.toThrow();
  });
});

describe("the line limit setting", () => {
  it("is 8 MB unless TABLEMINDS_MAX_LINE_BYTES says otherwise", () => {
    expect(maxLineBytes("t.csv", {})).toBe(DEFAULT_MAX_LINE_BYTES);
    expect(maxLineBytes("t.csv", { TABLEMINDS_MAX_LINE_BYTES: "1000" })).toBe(1000);
    expect(() => maxLineBytes("t.csv", { TABLEMINDS_MAX_LINE_BYTES: "lots" })).toThrow(
      /TABLEMINDS_MAX_LINE_BYTES is "lots"/,
    );
    // DuckDB cannot allocate for lines of gigabytes: the setting stops at 64 MB.
    expect(() => maxLineBytes("t.csv", { TABLEMINDS_MAX_LINE_BYTES: String(2 ** 30) })).toThrow(
      /from 1 to 67108864/,
    );
  });

  it("lets DuckDB read every line the loader lets in, quoted over again", () => {
    expect(duckDbMaxLineSize({})).toBe(4 * DEFAULT_MAX_LINE_BYTES);
    expect(duckDbMaxLineSize({ TABLEMINDS_MAX_LINE_BYTES: "1000" })).toBe(2_000_000);
    // In a buffer just larger, not the 16 times DuckDB would reserve by itself.
    expect(duckDbLineOptions({})).toBe("max_line_size = 33554432, buffer_size = 34603008");
  });
});
