import { describe, expect, it } from "vitest";
import { parseAnswer } from "../../nodes/answerer.js";
import { parseCode } from "../../nodes/coder.js";
import { ReplyParseError } from "../../nodes/llm.js";
import { parsePlan } from "../../nodes/planner.js";

describe("parsePlan", () => {
  it("reads numbered steps inside <plan>", () => {
    const reply =
      "Sure.\n<plan>\n1. Filter rows where year > 2000.\n2) Sum the sales column.\n</plan>";
    expect(parsePlan(reply)).toEqual(["Filter rows where year > 2000.", "Sum the sales column."]);
  });

  it("reads numbered steps without tags, including markdown and 'Step n:'", () => {
    const reply = "Here is my plan:\n**1.** Group by nation\nStep 2: Take the max\n\nDone.";
    expect(parsePlan(reply)).toEqual(["Group by nation", "Take the max"]);
  });

  it("falls back to bullet lines", () => {
    expect(parsePlan("- load\n- count rows")).toEqual(["load", "count rows"]);
  });

  it("accepts an unclosed <plan> block of plain lines", () => {
    expect(parsePlan("<plan>\nCount the rows\nPrint it")).toEqual(["Count the rows", "Print it"]);
  });

  it("fails clearly on prose with no steps", () => {
    expect(() => parsePlan("I am not sure what you mean.")).toThrow(ReplyParseError);
    expect(() => parsePlan("I am not sure what you mean.")).toThrow(/planner reply has no plan/);
  });
});

describe("parseCode", () => {
  it("takes the python block out of prose", () => {
    const reply = "Here you go:\n```python\nprint(df.shape[0])\n```\nThis prints the count.";
    expect(parseCode(reply)).toBe("print(df.shape[0])");
  });

  it("joins several python blocks in order", () => {
    const reply = "```python\nx = 1\n```\nthen\n```py\nprint(x)\n```";
    expect(parseCode(reply)).toBe("x = 1\nprint(x)");
  });

  it("prefers python blocks over other fenced blocks", () => {
    const reply = "```text\nexpected: 3\n```\n```python\nprint(3)\n```";
    expect(parseCode(reply)).toBe("print(3)");
  });

  it("takes an untagged fence when no python block exists", () => {
    expect(parseCode("```\nprint(2)\n```")).toBe("print(2)");
  });

  it("takes an unclosed block (a truncated reply)", () => {
    expect(parseCode("```python\ntotal = df['gold'].sum()\nprint(total)")).toBe(
      "total = df['gold'].sum()\nprint(total)",
    );
  });

  it("accepts bare code with no prose", () => {
    expect(parseCode("total = df['gold'].sum()\nprint(total)")).toBe(
      "total = df['gold'].sum()\nprint(total)",
    );
  });

  it("fails clearly when there is no code", () => {
    expect(() => parseCode("The answer is probably 42.")).toThrow(/coder reply has no ```python/);
  });
});

describe("parseAnswer", () => {
  it("reads the Final Answer line and cited ids", () => {
    const reply = "The total is computed.\nFinal Answer: 203\nEvidence: a1:out2, a1:by_nation";
    expect(parseAnswer(reply)).toEqual({ final: "203", cited: ["a1:out2", "a1:by_nation"] });
  });

  it("tolerates markdown around the marker and bracketed ids", () => {
    const reply = "**Final Answer:** `United States`\n**Evidence:** [a2:out1]";
    expect(parseAnswer(reply)).toEqual({ final: "United States", cited: ["a2:out1"] });
  });

  it("takes the answer from the next line when the marker line is empty", () => {
    expect(parseAnswer("Final Answer:\n  ROC\n**Evidence:** a1:out1").final).toBe("ROC");
  });

  it("uses the first Final Answer when there are several", () => {
    expect(parseAnswer("Final Answer: 1\nFinal Answer: 2").final).toBe("1");
  });

  it("accepts a reply of one short line without a marker", () => {
    expect(parseAnswer("  42  ")).toEqual({ final: "42", cited: [] });
  });

  it("fails clearly on a long reply with no marker", () => {
    expect(() => parseAnswer("Well.\nI think the data shows many things.\nHard to say.")).toThrow(
      /answerer reply has no "Final Answer:" line/,
    );
  });
});
