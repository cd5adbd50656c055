import { utils, write } from "@e965/xlsx";
import { beforeAll, describe, expect, it } from "vitest";
import type {
  Attempt,
  CodeResult,
  Evidence,
  Lineage,
  ProducedTable,
  TableRef,
} from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { renderResult } from "../../cli/report.js";
import { loadTable } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";
import { cell, ranAttempt } from "../support/evidence.js";
import { fixtureDir, tableRef, writeFixture } from "../support/table-fixtures.js";

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

/** A declared scalar result resting on `lineage`. */
function declared(value: number, line: number, lineage: Lineage[]): CodeResult {
  return {
    from: "declared",
    kind: "scalar",
    values: [value],
    labels: [],
    text: String(value),
    line,
    derived: "yes",
    derivation: "changed when the table's values were perturbed",
    lineage,
  };
}

/** An attempt that ran `code`, with its typed result, and its evidence (printed lines, tables). */
function withResult(
  id: string,
  code: string,
  stdout: string,
  result: CodeResult,
  tables: ProducedTable[] = [],
): { attempt: Attempt; evidence: Evidence[] } {
  const ran = ranAttempt(id, code, stdout, tables);
  const exec = ran.attempt.result;
  if (!exec) throw new Error("a run expected");
  return { attempt: { ...ran.attempt, result: { ...exec, result } }, evidence: ran.evidence };
}

/** The result packet the executor posts: the declared value, resting on source cells. */
function resultPacket(attempt: string, value: number, line: number, parents: string[]): Evidence {
  return {
    id: `${attempt}:result`,
    modality: "code",
    source: "executor",
    anchor: { kind: "code", attempt, lines: [line, line], stdout: [0, 0] },
    value,
    time: "2026-01-01T00:00:00Z",
    provenance: { attempt, parents },
    confidence: 1,
  };
}

/** A finished run's state, built by hand: only what the report reads. */
function finished(
  tables: TableRef[],
  attempts: Attempt[],
  evidence: Evidence[],
  cited: string[],
): TableQAStateValue {
  return {
    question: "q",
    sources: [],
    tables,
    plan: [],
    attempts,
    evidence,
    claims: [],
    edges: [],
    answer: { raw: "", final: "380", evidence: cited },
    verdict: null,
    checked: [],
    reflections: [],
    memories: [],
  } as unknown as TableQAStateValue;
}

/** The evidence section of the report. */
function evidenceOf(report: string): string {
  return report.slice(report.indexOf("Evidence:"));
}

async function pnlTable(): Promise<TableRef> {
  const book = utils.book_new();
  const rows = [
    ["P&L FY2024"],
    [],
    [null, "line", 2023, 2024],
    [null, "Revenue", 910, 1020],
    [null, "Costs", 600, 640],
    [],
    [null, "Profit", 310, 380],
  ];
  utils.book_append_sheet(book, utils.aoa_to_sheet(rows), "P&L FY2024");
  const file = writeFixture(dir, "pnl.xlsx", write(book, { type: "buffer", bookType: "xlsx" }));
  return (await loadTable({ path: file })).table;
}

const NATIONS = [
  "United States",
  "China",
  "Japan",
  "Great Britain",
  "ROC",
  "Australia",
  "Netherlands",
  "France",
  "Germany",
  "Italy",
  "Canada",
  "Brazil",
  "New Zealand",
  "Cuba",
];

async function medalsTable(): Promise<TableRef> {
  const lines = NATIONS.map((nation, i) => `${nation},${40 - 2 * i}`);
  const file = writeFixture(dir, "medals.csv", `nation,gold\n${lines.join("\n")}\n`);
  return (await loadTable({ path: file })).table;
}

describe("the report's evidence, in the user's coordinates", () => {
  it("cites a workbook's cells in A1 notation and shows the rows the result comes from", async () => {
    const pnl = await pnlTable();
    const code = "result = pnl.loc[pnl.line == 'Profit', '2024'].iloc[0]\nprint(result)";
    const run = withResult(
      "a1",
      code,
      "380\n",
      declared(380, 1, [{ table: "pnl", rows: [2], columns: ["line", "2024"] }]),
    );
    const evidence = [
      ...run.evidence,
      resultPacket("a1", 380, 1, ["pnl:r2:2024", "pnl:r2:line"]),
      cell("pnl", 0, "2023", "910"),
    ];
    const report = await renderResult(
      finished([pnl], [run.attempt], evidence, ["a1:result", "pnl:r0:2023"]),
    );
    const shown = evidenceOf(report);
    expect(shown).toContain(`[a1:result] result "380" (declared), from:`);
    expect(shown).toContain("cells: 'P&L FY2024'!D7; 'P&L FY2024'!B7\n");
    expect(shown).toContain(`[pnl:r0:2023] cell 'P&L FY2024'!C4 = "910"`);
    expect(shown).toContain(
      `The result of a1 comes from 1 row of pnl.xlsx, sheet "P&L FY2024" (sheet row 7; columns line, 2024):`,
    );
    expect(shown).toContain("| sheet row | line (B) | 2023 (C) | 2024 (D) |");
    expect(shown).toContain("| 7 | Profit | 310 | 380 |");
    // The supporting row, not the first rows of the table.
    expect(shown).not.toContain("Revenue");
    expect(shown).not.toMatch(/row 2, column 2024/);
  });

  it("shows at most ten supporting rows of a CSV, at their lines, then how many more", async () => {
    const medals = await medalsTable();
    const rows = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12];
    const run = withResult(
      "a1",
      "result = int(df.gold[df.gold < 40].sum())",
      "",
      declared(330, 1, [{ table: "medals", rows, columns: ["gold"] }]),
    );
    const evidence = [
      ...run.evidence,
      resultPacket(
        "a1",
        330,
        1,
        rows.map((r) => `medals:r${r}:gold`),
      ),
      {
        ...cell("medals", 0, "gold", "gold"),
        id: "medals:col:gold",
        anchor: { kind: "cells" as const, table: "medals", rows: [], columns: ["gold"] },
      },
    ];
    const report = await renderResult(
      finished([medals], [run.attempt], evidence, ["a1:result", "medals:col:gold"]),
    );
    const shown = evidenceOf(report);
    expect(shown).toContain("cells: medals.csv lines 3-12 and 1 more, column gold\n");
    expect(shown).toContain(
      `[medals:col:gold] column header medals.csv line 1, column gold = "gold"`,
    );
    expect(shown).toContain(
      "The result of a1 comes from 11 rows of medals.csv (lines 3-12 and 1 more; columns gold):",
    );
    expect(shown).toContain("| line | nation | gold |");
    expect(shown).toContain("| 3 | China | 38 |");
    expect(shown).toContain("| 12 | Canada | 20 |");
    expect(shown).not.toContain("New Zealand");
    expect(shown).not.toContain("United States");
    expect(shown).toMatch(/\| 12 \| Canada \| 20 \|\n\s*and 1 more/);
  });

  it("says a result rests on every row instead of listing the first ones", async () => {
    const medals = await medalsTable();
    const all = NATIONS.map((_, i) => i);
    const run = withResult(
      "a1",
      "result = int(df.gold.sum())",
      "",
      declared(378, 1, [{ table: "medals", rows: all, columns: ["gold"] }]),
    );
    const report = await renderResult(
      finished(
        [medals],
        [run.attempt],
        [...run.evidence, resultPacket("a1", 378, 1, [])],
        ["a1:result"],
      ),
    );
    expect(evidenceOf(report)).toContain(
      "The result of a1 comes from all 14 rows of medals.csv (columns gold).",
    );
    expect(evidenceOf(report)).not.toContain("| line |");
  });

  it("shows a produced table's rows that matter, each at its source line", async () => {
    const medals = await medalsTable();
    // `top = df[df.gold > 33]` keeps source rows 0-3 (its index, written first by the sandbox).
    const top = await tableRef(
      "top",
      [
        "index,nation,gold",
        "0,United States,40",
        "1,China,38",
        "2,Japan,36",
        "3,Great Britain,34",
      ].join("\n"),
      [
        { name: "index", dtype: "int64" },
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    );
    const produced: ProducedTable = {
      variable: "top",
      line: 1,
      table: top,
      lineage: [{ table: "medals", rows: [0, 1, 2, 3], columns: ["nation", "gold"] }],
    };
    const run = withResult(
      "a1",
      "top = df[df.gold > 33]\nresult = top.nation.iloc[2]\nprint(result)",
      "Japan\n",
      {
        ...declared(0, 2, [{ table: "medals", rows: [2], columns: ["nation"] }]),
        kind: "scalar",
        values: ["Japan"],
        text: "Japan",
      },
      [produced],
    );
    const report = await renderResult(
      finished([medals], [run.attempt], run.evidence, ["a1:top", "a1:out1"]),
    );
    const shown = evidenceOf(report);
    expect(shown).toContain("[a1:top] table `top`, 4 rows, made by:");
    expect(shown).toContain("its 1 of 4 rows the result comes from, at their place in medals.csv:");
    expect(shown).toContain("| from | nation | gold |");
    expect(shown).toContain("| line 4 | Japan | 36 |");
    expect(shown).not.toContain("| China");
    expect(shown).toContain(
      "The result of a1 comes from 1 row of medals.csv (line 4; columns nation):",
    );
  });
});
