import { beforeAll, describe, expect, it } from "vitest";
import { loadTable } from "../../tables/load.js";
import { profileTable, renderTable } from "../../tables/profile.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

beforeAll(() => {
  useTempHome();
});

const MEDALS = [
  "rank,nation,gold,share,host,note",
  "1,United States,39,0.25,false,",
  "2,China,38,,false,",
  "3,Japan,27,1.5e-1,true,home games",
  "4,Great Britain,22,-0.5,false,",
  "5,ROC,20,0.1,false,competed as ROC",
  "6,Australia,17,0.3,false,",
  "7,Netherlands,10,0.2,false,a | pipe",
].join("\n");

describe("profileTable", () => {
  it("describes size, dtypes, ranges, examples and the first rows", async () => {
    const file = writeFixture(fixtureDir(), "medals.csv", MEDALS);
    const { table } = await loadTable({ path: file });
    const profile = await profileTable(table, { sampleRows: 3 });
    const lines = profile.split("\n");
    expect(lines[0]).toBe("Table `medals` (pandas DataFrame `medals`): 7 rows, 6 columns");
    expect(lines).toContain("- `rank` (int64): 1 to 7");
    expect(lines).toContain("- `gold` (int64): 10 to 39");
    expect(lines).toContain("- `share` (float64): -0.5 to 0.3; 1 missing");
    expect(lines).toContain("- `host` (bool): 1 true, 6 false");
    expect(lines).toContain(
      '- `nation` (object): 7 distinct, e.g. "United States", "China", "Japan"',
    );
    expect(lines).toContain(
      '- `note` (object): 3 distinct, e.g. "home games", "competed as ROC", "a | pipe"; 4 missing',
    );
    expect(lines).toContain("First 3 of 7 rows:");
    expect(profile).toContain("| 1 | United States | 39 | 0.25 | false |  |");
    expect(profile).toContain("| 3 | Japan | 27 | 1.5e-1 | true | home games |");
    expect(profile).not.toContain("Great Britain");
    expect(lines.at(-1)).toBe("| ... | ... | ... | ... | ... | ... |");
  });

  it("shows all rows when they fit and cuts long cells to maxWidth", async () => {
    const long = "x".repeat(60);
    const { table } = await loadTable({
      name: "notes",
      columns: ["id", "text"],
      data: [[1, long]],
    });
    const profile = await profileTable(table, { maxWidth: 10 });
    expect(profile).toContain("All 1 row:");
    expect(profile).toContain(`| 1 | ${"x".repeat(9)}… |`);
    expect(profile).toContain(`e.g. "${"x".repeat(9)}…"`);
    expect(profile).not.toContain("x".repeat(11));
  });

  it("says when a table has no rows", async () => {
    const { table } = await loadTable({ name: "nothing", columns: ["a"], data: [] });
    const profile = await profileTable(table);
    expect(profile).toContain("`nothing`");
    expect(profile).toContain("0 rows, 1 column");
    expect(profile).toContain("- `a` (object): no values");
    expect(profile).toContain("The table has no rows.");
  });
});

describe("renderTable", () => {
  const columns = ["name", "note"];
  const rows = [
    ["a", "short"],
    ["b", "has | pipe"],
    ["c", "line\nbreak"],
    ["d", "0123456789abcdef"],
  ];

  it("renders a markdown pipe table, escaping pipes and flattening line breaks", () => {
    expect(renderTable(columns, rows)).toBe(
      [
        "| name | note |",
        "| --- | --- |",
        "| a | short |",
        "| b | has \\| pipe |",
        "| c | line\\nbreak |",
        "| d | 0123456789abcdef |",
      ].join("\n"),
    );
  });

  it("truncates rows with a ... row and cells to maxWidth, with row numbers", () => {
    const text = renderTable(columns, rows, { maxRows: 2, maxWidth: 4, rowNumbers: true });
    expect(text).toBe(
      [
        "| # | name | note |",
        "| --- | --- | --- |",
        "| 0 | a | sho… |",
        "| 1 | b | has… |",
        "| ... | ... | ... |",
      ].join("\n"),
    );
  });

  it("pads short rows and handles no rows or no columns", () => {
    expect(renderTable(["a", "b"], [["1"]])).toBe("| a | b |\n| --- | --- |\n| 1 |  |");
    expect(renderTable(["a"], [])).toBe("| a |\n| --- |");
    expect(renderTable([], [])).toBe("(no columns)");
  });

  it("does not split a character made of two UTF-16 units", () => {
    expect(renderTable(["e"], [["🙂🙂🙂"]], { maxWidth: 2 })).toContain("| 🙂… |");
  });
});
