import { describe, expect, it } from "vitest";
import { countTokens, loadTokenizer, TOKEN_ENCODING } from "../../tables/tokens.js";

describe("token counting", () => {
  it("counts o200k_base tokens, loading the encoding once", async () => {
    const tokenizer = await loadTokenizer();
    expect(await loadTokenizer()).toBe(tokenizer);
    expect(tokenizer.encoding).toBe(TOKEN_ENCODING);
    expect(await countTokens("")).toBe(0);
    expect(await countTokens("hello world")).toBe(2);
    // Characters would say 59; the tokenizer sees ten words.
    expect(await countTokens("table ".repeat(10).trim())).toBe(10);
    expect(await countTokens("| 0 | United States | 39 |")).toBeLessThan(15);
  });

  it("reads special-token spellings in a cell as plain text", async () => {
    expect(await countTokens("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("truncates to at most the tokens asked for, keeping a prefix", async () => {
    const tokenizer = await loadTokenizer();
    const text = "Zürich, São Paulo and 東京 are cities; ".repeat(20);
    for (const max of [0, 1, 7, 50, 10_000]) {
      const cut = tokenizer.truncate(text, max);
      expect(text.startsWith(cut)).toBe(true);
      expect(tokenizer.count(cut)).toBeLessThanOrEqual(max);
      expect(cut).not.toContain("\uFFFD");
    }
    expect(tokenizer.truncate(text, 10_000)).toBe(text);
    expect(tokenizer.count(tokenizer.truncate(text, 50))).toBeGreaterThan(40);
  });
});
