import { writeFileSync } from "node:fs";
import path from "node:path";
import { utils, write } from "@e965/xlsx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { fixtureDir } from "../support/table-fixtures.js";

describe("tableminds ask over a workbook past the limits", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  let book: string;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: () => ({ status: 500, content: "not expected" }) });
    env = stubEnv(stub.url);
    const rows = Array.from({ length: 200 }, (_, i) => [`city ${i}`, i]);
    const workbook = utils.book_new();
    utils.book_append_sheet(workbook, utils.aoa_to_sheet([["city", "n"], ...rows]), "S");
    book = path.join(fixtureDir(), "cities.xlsx");
    writeFileSync(book, write(workbook, { type: "buffer", bookType: "xlsx", compression: true }));
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("says in one line which file was refused and which setting reads it", async () => {
    const args = ["ask", book, "How many cities?", "--no-memory"];
    const result = await runCli(args, { ...env, TABLEMINDS_XLSX_MAX_CELLS: "100" });
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd()).toBe(
      `tableminds: cannot load table ${book}: refused: its sheets hold more than 100 cells ` +
        "(passed in xl/worksheets/sheet1.xml; a cell bomb?); raise TABLEMINDS_XLSX_MAX_CELLS to read it",
    );
    expect(stub.requests).toEqual([]);
  }, 60_000);
});
