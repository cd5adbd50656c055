import { describe, expect, it } from "vitest";
import { formatScore } from "../../grounding/verdict.js";

describe("formatScore", () => {
  it("rewards a bare answer and marks prose, markdown, refusals and leftovers", () => {
    expect(formatScore("203").score).toBe(2);
    expect(formatScore("Real Betis, Real Madrid B", "list").score).toBe(2);
    const long = "benin, quebec, cape verde, ivory coast, chile, peru, sierra leone, ghana, togo";
    expect(formatScore(`${long}, ${long}, ${long}`, "list").score).toBe(2);
    expect(formatScore("203. The code summed the gold column of every nation.")).toEqual({
      score: 1,
      issue: "the answer carries an explanation (10 words); give only the value",
    });
    expect(formatScore("Yes, because 203 is more than 200", "yesno").score).toBe(1);
    expect(formatScore("**203**").score).toBe(1);
    expect(formatScore('"Japan"').issue).toBe(
      "the answer is wrapped in markdown or quotes; give the bare value",
    );
    expect(formatScore("I cannot tell from the table").score).toBe(0);
    expect(formatScore("cannot be computed").issue).toMatch(/refusal/);
    expect(formatScore("unknown").score).toBe(0);
    expect(formatScore("Final Answer: 203").score).toBe(0);
    expect(formatScore("  ").score).toBe(0);
  });

  it("takes long proper names in a list for names, not an explanation", () => {
    const laureates =
      "Office of the United Nations High Commissioner for Refugees, Mohamed ElBaradei, " +
      "International Physicians for the Prevention of Nuclear War, Jody Williams, " +
      "Médecins Sans Frontières, Kofi Annan";
    expect(formatScore(laureates, "list")).toEqual({ score: 2 });
    // A long lower-case segment still reads as an explanation.
    expect(
      formatScore("Kofi Annan, who won it for the work of the united nations", "list").score,
    ).toBe(1);
  });

  it("lets a question that wants an explanation have one, within reason", () => {
    const prose =
      "The table lists the medals of ten nations. The United States leads with 39 gold.";
    expect(formatScore(prose, "text").score).toBe(2);
    expect(formatScore(prose, "number").score).toBe(1);
    expect(formatScore("word ".repeat(300), "text").score).toBe(1);
  });
});
