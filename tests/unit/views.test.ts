import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { loadTables } from "../../tables/load.js";
import { type AnsweredRun, answerView } from "../../views/answer-view.js";
import { AnswerViewSchema, TableViewSchema } from "../../views/schemas.js";
import { tableView } from "../../views/table-view.js";
import { EXAMPLES, useTempHome } from "../support/env.js";
import { cell, codeResult, ranAttempt } from "../support/evidence.js";
import { dollars, FINANCE, financeWorkbookBytes } from "../support/messy-workbook.js";
import { answer, verdict } from "../support/verdicts.js";

/*
 * The views the generative UI draws: the table in its user's coordinates, with the rows the
 * reading left out put back and marked; the answer with exactly its lineage's cells lit (a cell
 * that merely holds the value is not), and its verdict in the words the page shows.
 */

let medals: TableRef;
let finance: TableRef[];

beforeAll(async () => {
  useTempHome();
  [medals] = (await loadTables({ path: path.join(EXAMPLES, "olympics_2020_medals.csv") })).map(
    (l) => l.table,
  ) as [TableRef];
  const dir = mkdtempSync(path.join(os.tmpdir(), "views-"));
  const file = path.join(dir, "regional_results.xlsx");
  writeFileSync(file, financeWorkbookBytes());
  finance = (await loadTables({ path: file })).map((l) => l.table);
}, 60_000);

describe("the table view", () => {
  it("puts the workbook's title, header rows, hidden row, total and notes where they were", async () => {
    const [results] = finance as [TableRef];
    const view = TableViewSchema.parse(await tableView(results, { tables: finance }));
    expect(view.unit).toBe("sheet row");
    const rows = view.grid.map((r) => [r.kind, r.place]);
    expect(rows).toEqual([
      ["title", null],
      ["header", 3],
      ["header", 4],
      ["data", 5],
      ["data", 6],
      ["data", 7],
      ["hidden", 8],
      ["data", 9],
      ["data", 10],
      ["total", 11],
      ["note", 13],
      ["note", 14],
    ]);
    expect(view.grid[1]?.cells.slice(1, 3)).toEqual(["Revenue", "Revenue"]);
    expect(view.grid[2]?.cells.slice(0, 3)).toEqual(["Region", "Q1", "Q2"]);
    // Cells as the sheet writes them, and the letters of their columns.
    expect(view.grid[3]?.cells.slice(0, 2)).toEqual([
      "North",
      dollars(FINANCE.amounts[0]?.[0] ?? 0),
    ]);
    expect(view.columns.map((c) => c.letter).join("")).toBe("ABCDEFGHI");
    expect(view.grid[10]?.text).toBe(FINANCE.notes[0]);
    expect(view.words.join("\n")).toContain("Total rows left out of the data");
    expect(view.highlight).toEqual([]);
  });

  it("shows a window of a long table and says how many rows it leaves out", async () => {
    const view = await tableView(medals, { focus: [9, 2, 2, 40] });
    expect(view.grid.filter((r) => r.kind === "data").map((r) => [r.row, r.place])).toEqual([
      [2, 4],
      [9, 11],
    ]);
    expect(view.more).toBe(0);
    const first = await tableView(medals);
    expect(first.grid.filter((r) => r.kind === "data")).toHaveLength(10);
  });
});

function medalsRun(more: Partial<AnsweredRun> = {}): AnsweredRun {
  const ran = ranAttempt(
    "a1",
    'result = df.loc[[0, 1], "gold"].sum()\nprint(result)',
    "77\n",
    [],
    codeResult([77], {
      line: 1,
      lineage: [{ table: "df", rows: [0, 1], columns: ["gold"] }],
    }),
  );
  return {
    question: "How many golds did the first two nations win?",
    answer: answer("77", ["a1:result"]),
    verdict: verdict("77"),
    plan: ["Sum the first two golds."],
    attempts: [ran.attempt],
    evidence: ran.evidence,
    tables: [medals],
    ...more,
  };
}

describe("the answer view", () => {
  it("lights exactly the cells the result is derived from, and cites them as the user finds them", async () => {
    const view = AnswerViewSchema.parse(await answerView(medalsRun()));
    expect(view.status).toBe("passed");
    expect(view.sources).toHaveLength(1);
    expect(view.sources[0]?.highlight).toEqual([
      { row: 0, column: "gold" },
      { row: 1, column: "gold" },
    ]);
    expect(view.cells).toEqual(["olympics_2020_medals.csv lines 2-3, column gold"]);
    expect(view.code?.lines).toEqual([1, 1]);
    expect(view.output).toBe("77\n");
  });

  it("does not light a cell that merely holds the value when the result says where it comes from", async () => {
    const run = medalsRun();
    // A cell elsewhere that happens to hold a value, cited beside the result.
    const stray = cell("olympics_2020_medals", 7, "total", "77");
    const view = await answerView({
      ...run,
      answer: answer("77", ["a1:result", stray.id]),
      evidence: [...run.evidence, stray],
    });
    const lit = view?.sources.flatMap((s) => s.highlight) ?? [];
    expect(lit).not.toContainEqual({ row: 7, column: "total" });
    expect(lit).toHaveLength(2);
  });

  it("lights a looked-up cell when there is no computation", async () => {
    const looked = cell("olympics_2020_medals", 3, "gold", "22");
    const view = await answerView({
      ...medalsRun(),
      attempts: [],
      evidence: [looked],
      answer: answer("22", [looked.id]),
    });
    expect(view?.sources[0]?.highlight).toEqual([{ row: 3, column: "gold" }]);
  });

  it("says not sure, unchecked or passed as the verdict does", async () => {
    const notSure = {
      ...verdict("77"),
      sure: false,
      issues: ["the result reads gold, not silver"],
    };
    const doubtful = await answerView(medalsRun({ verdict: notSure }));
    expect(doubtful?.status).toBe("not sure");
    expect(doubtful?.reasons).toEqual(["the result reads gold, not silver"]);
    const failing = await answerView(medalsRun({ verdict: { ...verdict("77"), pass: false } }));
    expect(failing?.status).toBe("not sure");
    expect((await answerView(medalsRun({ verdict: null })))?.status).toBe("unchecked");
    expect((await answerView(medalsRun({ verdict: null })))?.confidence).toBeNull();
    const prose = { ...verdict("77"), unchecked: true };
    expect((await answerView(medalsRun({ verdict: prose })))?.status).toBe("unchecked");
    expect(await answerView(medalsRun({ answer: null }))).toBeNull();
  });

  it("shows no source table the result read nothing of", async () => {
    const run = medalsRun();
    const attempt = run.attempts[0];
    const result = attempt?.result?.result;
    if (!attempt?.result || !result) throw new Error("no result");
    const empty = { ...result, lineage: [{ table: "df", rows: [], columns: [] }] };
    const view = await answerView({
      ...run,
      attempts: [{ ...attempt, result: { ...attempt.result, result: empty } }],
    });
    expect(view?.sources).toEqual([]);
  });
});
