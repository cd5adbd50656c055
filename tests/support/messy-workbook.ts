import { type CellObject, utils, type WorkBook, type WorkSheet, write } from "@e965/xlsx";

/**
 * The finance workbook of issue 23, built in memory: what a new user gave tableminds and got
 * back as `column_2`..`column_9` with the Total row and the footnotes as data.
 *
 * Sheet "Results" (visible):
 *   1  Regional results FY2024 (merged A1:I1)
 *   2  (blank)
 *   3  Region (A3:A4) | Revenue (B3:E3) | Costs (F3:I3) | Check (J3:J4, column J hidden)
 *   4                 | Q1 Q2 Q3 Q4     | Q1 Q2 Q3 Q4
 *   5-9  North, South, East, [row 8: "Test region", hidden], West, Central
 *        amounts stored as text ("$1,250,400"); West's Costs Q4 (I9) a formula with its cached value
 *   11 Total (the column sums of the five visible regions, as text)
 *   12 (blank)
 *   13 1) Amounts in US dollars, unaudited.
 *   14 Source: regional ledgers, March 2025.
 * Sheet "Lookup" (hidden): a small code table.
 */
export const FINANCE = {
  sheet: "Results",
  hiddenSheet: "Lookup",
  title: "Regional results FY2024",
  regions: ["North", "South", "East", "West", "Central"],
  hiddenRegion: "Test region",
  notes: ["1) Amounts in US dollars, unaudited.", "Source: regional ledgers, March 2025."],
  /** Revenue Q1..Q4 then Costs Q1..Q4 of each region, in dollars. */
  amounts: [
    [1250400, 1310250, 1402000, 1388500, 800100, 820300, 845000, 851200],
    [980000, 1012500, 1044800, 1100000, 650000, 662100, 671300, 690400],
    [1500250, 1490000, 1535600, 1602300, 990000, 1004000, 1010500, 1032700],
    [720300, 745100, 760000, 781900, 480200, 488000, 495600, 502100],
    [610000, 634500, 650250, 671800, 402300, 410900, 418000, 425500],
  ],
  hiddenAmounts: [1, 2, 3, 4, 5, 6, 7, 8],
  /** The formula cell: West's Costs Q4, I9 (a number, where the other amounts are text). */
  formula: { address: "I9", text: "495600+6500" },
} as const;

/** The columns a careful reading of the Results sheet gives: its header rows as paths. */
export const FINANCE_COLUMNS = [
  "Region",
  ...["Revenue", "Costs"].flatMap((group) =>
    ["Q1", "Q2", "Q3", "Q4"].map((q) => `${group} / ${q}`),
  ),
];

/** "$1,250,400" */
export function dollars(amount: number): string {
  return `$${amount.toLocaleString("en-US")}`;
}

function resultsSheet(): WorkSheet {
  const f = FINANCE;
  const rows: (string | number | null)[][] = [
    [f.title, null, null, null, null, null, null, null, null, null],
    [],
    ["Region", "Revenue", null, null, null, "Costs", null, null, null, "Check"],
    [null, "Q1", "Q2", "Q3", "Q4", "Q1", "Q2", "Q3", "Q4", null],
  ];
  const visible = f.regions.map((region, i) => [
    region,
    ...(f.amounts[i] ?? []).map(dollars),
    "ok",
  ]);
  // The hidden region sits between East and West (sheet row 8).
  rows.push(...visible.slice(0, 3), [f.hiddenRegion, ...f.hiddenAmounts.map(dollars), "x"]);
  rows.push(...visible.slice(3));
  const totals = f.amounts[0]?.map((_, c) =>
    f.amounts.reduce((sum, row) => sum + (row[c] ?? 0), 0),
  );
  rows.push(["Total", ...(totals ?? []).map(dollars), null], [], [f.notes[0]], [f.notes[1]]);
  const sheet = utils.aoa_to_sheet(rows);
  const west = f.amounts[3] ?? [];
  const cell: CellObject = { t: "n", v: west[7] ?? 0, f: f.formula.text };
  sheet[f.formula.address] = cell;
  sheet["!merges"] = [
    utils.decode_range("A1:I1"),
    utils.decode_range("A3:A4"),
    utils.decode_range("B3:E3"),
    utils.decode_range("F3:I3"),
    utils.decode_range("J3:J4"),
  ];
  sheet["!rows"] = [];
  sheet["!rows"][7] = { hidden: true };
  sheet["!cols"] = [];
  sheet["!cols"][9] = { hidden: true };
  return sheet;
}

/** The workbook as an object (to change before writing) and its .xlsx bytes. */
export function financeWorkbook(): WorkBook {
  const book = utils.book_new();
  utils.book_append_sheet(book, resultsSheet(), FINANCE.sheet);
  const lookup = utils.aoa_to_sheet([
    ["code", "region"],
    ["N", "North"],
    ["S", "South"],
  ]);
  utils.book_append_sheet(book, lookup, FINANCE.hiddenSheet);
  book.Workbook = {
    Sheets: [
      { name: FINANCE.sheet, Hidden: 0 },
      { name: FINANCE.hiddenSheet, Hidden: 1 },
    ],
  };
  return book;
}

/** The finance workbook as .xlsx bytes. */
export function financeWorkbookBytes(): Buffer {
  return write(financeWorkbook(), { type: "buffer", bookType: "xlsx" }) as Buffer;
}
