import { beforeAll, describe, expect, it, vi } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { tableContext, tableContexts } from "../../tables/context.js";
import { loadTable } from "../../tables/load.js";
import * as tokens from "../../tables/tokens.js";
import { useTempHome } from "../support/env.js";

vi.mock("../../tables/tokens.js", { spy: true });

/* Loading o200k_base takes about half a second: a table whose bytes fit never pays for it. */

let small: TableRef;
let other: TableRef;

beforeAll(async () => {
  useTempHome();
  const load = async (name: string, rows: number) =>
    (
      await loadTable({
        name,
        columns: ["nation", "gold"],
        data: Array.from({ length: rows }, (_, i) => [`nation ${i}`, i]),
      })
    ).table;
  small = await load("small", 10);
  other = await load("other", 12);
});

describe("the tokenizer", () => {
  it("is not loaded for tables whose bytes fit the budget", async () => {
    const one = await tableContext(small, "How many gold medals?", { budgetTokens: 4000 });
    const two = await tableContexts([small, other], "How many gold?", { budgetTokens: 4000 });
    expect([one.view, ...two.map((c) => c.view)]).toEqual(["whole", "whole", "whole"]);
    expect(tokens.loadTokenizer).not.toHaveBeenCalled();
  });

  it("is loaded when a table's bytes exceed the budget", async () => {
    const context = await tableContext(small, "How many gold medals?", { budgetTokens: 60 });
    expect(tokens.loadTokenizer).toHaveBeenCalled();
    expect(context.tokens).toBeLessThanOrEqual(60);
  });
});
