import { beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { tableContext, tableContexts } from "../../tables/context.js";
import { packSections } from "../../tables/context-budget.js";
import { retrieveCells } from "../../tables/context-retrieval.js";
import { loadTable } from "../../tables/load.js";
import { countTokens, loadTokenizer } from "../../tables/tokens.js";
import { useTempHome } from "../support/env.js";

const CITIES = ["Oslo", "Lima", "Kyiv", "Pune", "Turin", "Quito", "Hanoi", "Perth"];
const NEEDLE_ROW = 1234;

async function table(name: string, columns: string[], data: unknown[][]): Promise<TableRef> {
  return (await loadTable({ name, columns, data })).table;
}

let medals: TableRef;
let orders: TableRef;
let wide: TableRef;
let notes: TableRef;

beforeAll(async () => {
  useTempHome();
  medals = await table(
    "medals",
    ["nation", "gold", "silver"],
    [
      ["United States", 39, 41],
      ["China", 38, 32],
      ["Japan", 27, 14],
      ["Great Britain", 22, 21],
    ],
  );
  // 3,000 orders; one customer appears once, far from the top.
  orders = await table(
    "orders",
    ["order_id", "customer", "city", "amount"],
    Array.from({ length: 3000 }, (_, i) => [
      i + 1,
      i === NEEDLE_ROW ? "Zanzibar Quill" : `customer ${i % 700}`,
      CITIES[i % CITIES.length],
      ((i * 37) % 1000) / 4,
    ]),
  );
  wide = await table(
    "wide",
    Array.from({ length: 60 }, (_, c) => `measure_${c}`),
    Array.from({ length: 40 }, (_, r) => Array.from({ length: 60 }, (_, c) => (r * 61 + c) % 997)),
  );
  notes = await table(
    "notes",
    ["id", "note"],
    Array.from({ length: 200 }, (_, i) => [
      i,
      `${"a long free-text remark ".repeat(8)}number ${i}`,
    ]),
  );
});

describe("the table context policy", () => {
  it("shows a table whole, with 0-based row numbers, when it fits the budget", async () => {
    const context = await tableContext(medals, "How many gold medals did Japan win?", {
      budgetTokens: 3000,
    });
    expect(context.view).toBe("whole");
    expect(context.text).toContain("All 4 rows (# is the 0-based row position):");
    expect(context.text).toContain("| 2 | Japan | 27 | 14 |");
    expect(context.text).toContain("| 3 | Great Britain | 22 | 21 |");
    // Its bytes fit the budget, so its tokens (fewer) need no count.
    expect(context.tokens).toBe(Buffer.byteLength(context.text));
    expect(await countTokens(context.text)).toBeLessThan(context.tokens);
  });

  it("retrieves instead when the whole table does not fit", async () => {
    const whole = await tableContext(medals, "Japan", { budgetTokens: 3000 });
    const exact = await countTokens(whole.text);
    // Between its tokens and its bytes, the table is counted and still shown whole.
    const counted = await tableContext(medals, "Japan", { budgetTokens: exact });
    expect(counted).toMatchObject({ view: "whole", tokens: exact });
    const small = await tableContext(medals, "How many gold medals did Japan win?", {
      budgetTokens: exact - 1,
    });
    expect(small.view).toBe("retrieved");
    expect(small.tokens).toBeLessThan(exact);
    expect(small.rows).toEqual([2]);
    expect(small.text).toContain("| 2 | Japan | 27 | 14 |");
    expect(small.text).toContain("- `gold` (int64): 22 to 39");
  });

  it("finds the row a question names in a table far too long to show", async () => {
    const context = await tableContext(orders, "What did Zanzibar Quill spend in Lima?", {
      budgetTokens: 1000,
    });
    expect(context.view).toBe("retrieved");
    expect(context.rows[0]).toBe(NEEDLE_ROW);
    expect(context.text).toContain(`| ${NEEDLE_ROW} | ${NEEDLE_ROW + 1} | Zanzibar Quill |`);
    expect(context.cells).toContainEqual(
      expect.objectContaining({ row: NEEDLE_ROW, column: "customer", match: "exact" }),
    );
    // Statistics: the most frequent values of a text column, ranges of numbers.
    expect(context.text).toMatch(/- `city` \(object\): 8 distinct, most frequent "Oslo" \(375\)/);
    expect(context.text).toContain("- `order_id` (int64): 1 to 3000");
  });

  it("never exceeds the budget, whatever the table's shape", async () => {
    const question = 'Which orders from "Oslo" by customer 12 had measure_3 above 500 in row 7?';
    for (const ref of [medals, orders, wide, notes]) {
      for (const budgetTokens of [0, 40, 200, 350, 800, 3000]) {
        const context = await tableContext(ref, question, { budgetTokens, sampleRows: 10 });
        expect(context.tokens, `${ref.name} at ${budgetTokens}`).toBeLessThanOrEqual(budgetTokens);
        const counted = await countTokens(context.text);
        if (context.view === "retrieved") expect(counted).toBe(context.tokens);
        else expect(counted).toBeLessThanOrEqual(context.tokens);
      }
    }
    // Given room, the retrieved view uses most of it rather than a token count of its own.
    const roomy = await tableContext(orders, question, { budgetTokens: 3000, sampleRows: 10 });
    expect(roomy.tokens).toBeGreaterThan(600);
  });

  it("keeps column names before statistics and rows when the budget is tight", async () => {
    const context = await tableContext(wide, "What is the largest measure_7?", {
      budgetTokens: 900,
    });
    expect(context.view).toBe("retrieved");
    for (let c = 0; c < 60; c++) expect(context.text).toContain(`- \`measure_${c}\` (int64)`);
    expect(context.text).toMatch(/^- `measure_7` \(int64\): \d+ to \d+$/m);
    expect(context.text).not.toContain("- `measure_59` (int64): ");
  });

  it("shows at most sampleRows rows from the top", async () => {
    const first = (sampleRows: number) =>
      tableContext(orders, "nothing to find here", { budgetTokens: 3000, sampleRows }).then(
        (context) => context.text.split("\n").filter((line) => /^\| \d+ \| \d+ \|/.test(line)),
      );
    expect(await first(0)).toEqual([]);
    expect((await first(3)).map((line) => line.split(" | ")[0])).toEqual(["| 0", "| 1", "| 2"]);
  });

  it("shares one budget among tables: a small one whole, the rest to the large one", async () => {
    const question = "How much did Zanzibar Quill spend, and how many gold medals has Japan?";
    const budgetTokens = 1500;
    const [small, large] = await tableContexts([medals, orders], question, { budgetTokens });
    expect(small?.view).toBe("whole");
    expect(large?.view).toBe("retrieved");
    expect(large?.rows).toContain(NEEDLE_ROW);
    expect((large?.budgetTokens ?? 0) + (small?.tokens ?? 0)).toBeGreaterThan(budgetTokens - 10);
    const joined = [small?.text, large?.text].join("\n\n");
    expect(await countTokens(joined)).toBeLessThanOrEqual(budgetTokens);
    // Two tables too large to show get equal shares.
    const both = await tableContexts([orders, notes], question, { budgetTokens });
    expect(both[0]?.budgetTokens).toBe(both[1]?.budgetTokens);
    expect(await countTokens(both.map((c) => c.text).join("\n\n"))).toBeLessThanOrEqual(
      budgetTokens,
    );
  });
});

describe("retrieveCells", () => {
  it("returns the cells a sub-question names, with their 0-based rows", async () => {
    const hits = await retrieveCells(orders, "Zanzibar Quill", { k: 2 });
    expect(hits[0]).toMatchObject({
      row: NEEDLE_ROW,
      column: "customer",
      value: "Zanzibar Quill",
      match: "exact",
    });
    expect(hits.length).toBeLessThanOrEqual(2);
    const numbers = await retrieveCells(medals, "38", { k: 5 });
    expect(numbers.map((hit) => [hit.row, hit.column])).toEqual([[1, "gold"]]);
    expect(await retrieveCells(medals, "Atlantis", { k: 5 })).toEqual([]);
  });
});

describe("packSections", () => {
  it("keeps pieces by priority and upgrades only when room is left", async () => {
    const tokenizer = await loadTokenizer();
    const sections = [
      { fixed: true, head: ["Header line"], pieces: [] },
      {
        head: ["Columns:"],
        pieces: [
          {
            text: "- a",
            priority: 1,
            upgrade: { text: "- a: 1 to 9, many notes here", priority: 3 },
          },
          { text: "- b", priority: 1 },
        ],
      },
      { head: ["Rows:"], pieces: [{ text: "| 1 | x |", priority: 2 }] },
    ];
    const full = packSections(sections, 1000, tokenizer);
    expect(full.text).toBe(
      "Header line\nColumns:\n- a: 1 to 9, many notes here\n- b\nRows:\n| 1 | x |",
    );
    const tight = packSections(sections, full.tokens - 2, tokenizer);
    expect(tight.text).toBe("Header line\nColumns:\n- a\n- b\nRows:\n| 1 | x |");
    const tiny = packSections(sections, 1, tokenizer);
    expect(tiny.cut).toBe(true);
    expect(tiny.tokens).toBeLessThanOrEqual(1);
  });
});
