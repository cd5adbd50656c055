import { describe, expect, it } from "vitest";
import { bestChecked } from "../../nodes/finalizer.js";
import { renderReflection } from "../../nodes/prompts.js";
import { defaultRoute, parseReflection, reflectionFromVerdict } from "../../nodes/reflector.js";
import { checked, verdict } from "../support/verdicts.js";

const ungrounded = verdict("205", { grounding: 0 }, [
  "205 conflicts with a1:out2 which printed 203",
]);

describe("parseReflection", () => {
  it("reads the diagnosis, the route and numbered improvements", () => {
    const reply = [
      "Diagnosis: The code summed silver instead of gold.",
      "Route: code",
      "Improvement:",
      "1. Sum the gold column.",
      "2. Print only the total.",
    ].join("\n");
    expect(parseReflection(reply, ungrounded)).toEqual({
      diagnosis: "The code summed silver instead of gold.",
      route: "coder",
      improvement: ["Sum the gold column.", "Print only the total."],
    });
  });

  it("takes markdown, 'planner' and bullet points", () => {
    const reply =
      "**Diagnosis:** the plan filtered the wrong year\n**Route:** planner\n**Improvements:**\n- keep 2020 only";
    expect(parseReflection(reply, ungrounded)).toEqual({
      diagnosis: "the plan filtered the wrong year",
      route: "planner",
      improvement: ["keep 2020 only"],
    });
  });

  it("decides the route from the verdict when the reply names none", () => {
    expect(parseReflection("Diagnosis: wrong column", ungrounded)?.route).toBe("coder");
    const wrongType = verdict("Japan", { type: 0 });
    expect(parseReflection("Diagnosis: misread the question", wrongType)?.route).toBe("planner");
  });

  it("gives null for a reply without a diagnosis", () => {
    expect(parseReflection("I think it is fine.", ungrounded)).toBeNull();
    expect(parseReflection("", ungrounded)).toBeNull();
  });
});

describe("defaultRoute and reflectionFromVerdict", () => {
  it("sends a wrong answer type to the planner and anything else to the coder", () => {
    expect(defaultRoute(verdict("x", { type: 0 }))).toBe("planner");
    expect(defaultRoute(verdict("x", { type: 1, grounding: 0 }))).toBe("coder");
  });

  it("builds a usable reflection from the checker's issues", () => {
    const reflection = reflectionFromVerdict(ungrounded);
    expect(reflection.route).toBe("coder");
    expect(reflection.diagnosis).toContain("205 conflicts with a1:out2");
    expect(reflection.improvement).toEqual([
      "Fix this: 205 conflicts with a1:out2 which printed 203",
    ]);
  });
});

describe("renderReflection", () => {
  it("is empty without reflections and shows the latest one otherwise", () => {
    expect(renderReflection([])).toBe("");
    const text = renderReflection([
      {
        id: "r1",
        diagnosis: "summed silver",
        improvement: ["sum gold"],
        route: "coder",
        verdict: ungrounded,
        afterAttempts: 1,
        byModel: true,
      },
    ]);
    expect(text).toContain('answer ("205") was rejected');
    expect(text).toContain("Diagnosis: summed silver");
    expect(text).toContain("1. sum gold");
  });
});

describe("bestChecked", () => {
  it("prefers a passing answer, then better grounding, then the higher total, then the later", () => {
    expect(bestChecked([])).toBeUndefined();
    const passing = checked("c1", "203");
    const ungroundedOne = checked("c2", "205", { grounding: 0 });
    expect(bestChecked([passing, ungroundedOne])?.id).toBe("c1");
    const partly = checked("c3", "204", { grounding: 1, format: 1 });
    const wrongType = checked("c4", "Japan", { type: 0, grounding: 2 });
    expect(bestChecked([partly, ungroundedOne])?.id).toBe("c3");
    expect(bestChecked([partly, wrongType])?.id).toBe("c4");
    const later = checked("c5", "204", { grounding: 1, format: 1 });
    expect(bestChecked([partly, later])?.id).toBe("c5");
  });
});
