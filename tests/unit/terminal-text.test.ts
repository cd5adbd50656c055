import { describe, expect, it } from "vitest";
import { terminalJson, terminalText } from "../../cli/terminal-text.js";

describe("text printed to a terminal", () => {
  it("shows escape sequences from a model, a table or code instead of obeying them", () => {
    const retitle = "Answer: 203\u001b]0;owned\u0007";
    expect(terminalText(retitle)).toBe("Answer: 203\\x1b]0;owned\\x07");
    expect(terminalText("a\rb\u009b2Jc\u007f")).toBe("a\\x0db\\x9b2Jc\\x7f");
    // Newlines and tabs lay the output out; they stay.
    expect(terminalText("  | a\t| b |\n")).toBe("  | a\t| b |\n");
  });

  it("escapes in JSON what JSON.stringify leaves raw, and stays valid JSON", () => {
    const value = { answer: "203\u001b[2J\u009b31m" };
    const json = terminalJson(JSON.stringify(value));
    expect(
      [...json].filter((c) => c.charCodeAt(0) < 0x20 || (c >= "\u007f" && c <= "\u009f")),
    ).toEqual([]);
    expect(JSON.parse(json)).toEqual(value);
  });
});
