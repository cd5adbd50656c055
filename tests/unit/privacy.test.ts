import { afterEach, describe, expect, it } from "vitest";
import type { CodeResult, Evidence, ExecResult } from "../../blackboard/schemas.js";
import { ask, PrivacyError } from "../../nodes/llm.js";
import { configurationOf } from "../../nodes/runtime.js";
import { ensureConfiguration } from "../../settings/configuration.js";
import { resetOperatorSettings, setOperatorSettings } from "../../settings/operator.js";
import {
  atLeastAsStrict,
  OPEN_PRIVACY,
  PromptPrivacy,
  stricterPrivacy,
} from "../../tables/privacy.js";
import { shownNumber } from "../../tables/privacy-context.js";
import { CellScrubber, HIDDEN } from "../../tables/privacy-scrub.js";
import { execResult } from "../support/exec-result.js";

const TEXTS = ["ZQX-canary-7741", "United States", "Q7", "Widget"];
const NUMBERS = [987654.321, 1500000.75, 12.5, 5];
const scrubber = () => new CellScrubber(TEXTS, NUMBERS, ["item", "amount"]);
const values = (question = "") =>
  new PromptPrivacy("values", question, scrubber(), new Set([1500000.75, 6]), new Set(["item"]));
const schema = () => new PromptPrivacy("schema", "", scrubber());

function scalar(value: string | number | boolean | null, text = String(value)): CodeResult {
  return {
    from: "declared",
    kind: "scalar",
    values: [value],
    labels: [],
    text,
    line: 1,
    derived: "yes",
    derivation: "",
    lineage: [],
  };
}

function run(stdout: string, result: CodeResult | null): ExecResult {
  return execResult({ stdout, result });
}

function packet(id: string, value: Evidence["value"]): Evidence {
  return {
    id,
    modality: "code",
    source: "executor",
    anchor: { kind: "code", attempt: "a1", lines: [1, 1], stdout: [0, 0] },
    value,
    time: "2025-01-01T00:00:00Z",
    provenance: { attempt: "a1", parents: [] },
    confidence: 1,
  };
}

describe("privacy modes in order", () => {
  it("takes the stricter of two modes, and compares them", () => {
    expect(stricterPrivacy("off", "values")).toBe("values");
    expect(stricterPrivacy("schema", "values")).toBe("schema");
    expect(atLeastAsStrict("values", "values")).toBe(true);
    expect(atLeastAsStrict("values", "schema")).toBe(false);
    expect(atLeastAsStrict("schema", "off")).toBe(true);
  });
});

describe("the cell scrub", () => {
  it("hides text cells in any case, and numbers of three digits or more", () => {
    const text = "bad row zqx-CANARY-7741 in United States costs 987654.321 (1,500,000.75)";
    expect(scrubber().scrub(text)).toBe(
      `bad row ${HIDDEN} in ${HIDDEN} costs ${HIDDEN} (${HIDDEN})`,
    );
    // A cell of six characters or more is hidden inside other words too; a number in an id stays.
    expect(scrubber().scrub("Widgets a987654 x12.5")).toBe(`${HIDDEN}s a987654 x12.5`);
  });

  it("hides cells an error glues together, and cells whose lower case is longer", () => {
    const cells = ["ZQX-canary-7741", "foo bar", "plain", "İSTANBUL-GİZLİ-5512", "Straße"];
    const s = new CellScrubber(cells, [], ["Stadt"]);
    // pandas 1.5 joins a column's cells with nothing between them in this message.
    const glued = "TypeError: Could not convert ZQX-canary-7741foo barplain to numeric";
    expect(s.scrub(glued)).toBe(
      `TypeError: Could not convert ${HIDDEN}${HIDDEN}${HIDDEN} to numeric`,
    );
    const turkish = "columns: ['İSTANBUL-GİZLİ-5512', 'x']; ValueError: İstanbul-gizli-5512 bad";
    expect(s.scrub(turkish)).toBe(`columns: ['${HIDDEN}', 'x']; ValueError: ${HIDDEN} bad`);
    expect(s.scrub("STRASSE and straße")).toBe(`STRASSE and ${HIDDEN}`);
  });

  it("leaves column names as written, a cell's text inside one too", () => {
    const s = new CellScrubber(["Insgesamt", "Bayern"], [], ["Bevölkerung - Insgesamt (in 1000)"]);
    expect(
      s.scrub("df['Bevölkerung - Insgesamt (in 1000)'] where Land == 'Bayern' or Insgesamt"),
    ).toBe(`df['Bevölkerung - Insgesamt (in 1000)'] where Land == '${HIDDEN}' or ${HIDDEN}`);
  });

  it("keeps cells the user's question names, numbers the mode shows, short cells unless strict", () => {
    const s = scrubber();
    expect(s.scrub("Widget in United States", { question: "what about united states?" })).toBe(
      `${HIDDEN} in United States`,
    );
    expect(s.scrub("max 1500000.75", { released: new Set([1500000.75]) })).toBe("max 1500000.75");
    expect(s.scrub("code Q7 qty 5")).toBe("code Q7 qty 5");
    expect(s.scrub("code Q7 qty 5", { strict: true })).toBe(`code ${HIDDEN} qty ${HIDDEN}`);
    // What the model's own code says stays, even when strict.
    expect(s.scrub("code Q7 qty 5", { strict: true, allowed: 'df["code"] == "Q7"' })).toBe(
      `code Q7 qty ${HIDDEN}`,
    );
  });

  it("knows a cell's number only from three digits", () => {
    expect(scrubber().isCellNumber(987654.321)).toBe(true);
    expect(scrubber().isCellNumber(5)).toBe(false);
    expect(scrubber().isCellNumber(203)).toBe(false);
  });
});

describe("what a prompt shows under each mode", () => {
  it("off shows everything as it is", () => {
    expect(OPEN_PRIVACY.output(run("a\n42\n", scalar(42)))).toBe("a\n42");
    expect(OPEN_PRIVACY.result(scalar("Widget"))).toBe("Widget");
    expect(OPEN_PRIVACY.error({ type: "KeyError", message: "'Widget'" })).toBe(
      "KeyError: 'Widget'",
    );
    expect(OPEN_PRIVACY.answer("Widget")).toBe("Widget");
    expect(OPEN_PRIVACY.scrub("Widget 987654.321")).toBe("Widget 987654.321");
  });

  it("values shows a computed number as the output, never the rest of what was printed", () => {
    const shown = values().output(run("ZQX-canary-7741\n203\n", scalar(203)));
    expect(shown.split("\n")[0]).toBe("203");
    expect(shown).not.toContain("ZQX");
    expect(values().showsResult(scalar(true))).toBe(true);
    expect(values().showsResult(scalar("203"))).toBe(true);
  });

  it("values keeps a result that is text, a list, or a number a cell holds", () => {
    expect(values().result(scalar("Widget"))).toBe(
      "(kept on this machine: a text of 6 characters)",
    );
    expect(values().showsResult(scalar(987654.321))).toBe(false);
    // ...unless the context shows that number anyway (a column's max).
    expect(values().showsResult(scalar(1500000.75))).toBe(true);
    const list = { ...scalar(1), kind: "list" as const, values: [1, 2], text: "[1, 2]" };
    expect(values().result(list)).toBe("(kept on this machine: a list of 2 values)");
  });

  it("schema shows nothing the code computed", () => {
    expect(schema().showsResult(scalar(203))).toBe(false);
    expect(schema().output(run("203\n", scalar(203)))).toBe(
      "(kept on this machine: what the code printed; its result is a number)",
    );
    expect(schema().answer("203")).toBe("(an answer, kept on this machine)");
    expect(schema().notes(["the answer 203 differs"])).toEqual([]);
  });

  it("cuts quoted values from error messages, keeping the names the code holds", () => {
    const error = {
      type: "ValueError",
      message: "could not convert string to float: 'Gizmo'; column 'item'; 'int' and 'str'",
    };
    expect(values().error(error, 'float(df["item"][0])')).toBe(
      `ValueError: could not convert string to float: '${HIDDEN}'; column 'item'; 'int' and 'str'`,
    );
    expect(values().error({ type: "ValueError", message: "bad row: Q7 costs 987654.321" })).toBe(
      `ValueError: bad row: ${HIDDEN} costs ${HIDDEN}`,
    );
    expect(
      schema().error({ type: "KeyError", message: "'amout' and 'Gizmo'" }, 'df["amout"]'),
    ).toBe("KeyError (it names 'amout'): its message is kept on this machine");
  });

  it("shows earlier answers that are numbers or yes/no, and fills in a result cited by id", () => {
    expect(values().answer("Yes")).toBe("Yes");
    expect(values().answer("203")).toBe("203");
    expect(values().answer("987654.321")).toBe("(a number, kept on this machine)");
    expect(values().answer("Widget")).toBe("(an answer of 6 characters, kept on this machine)");
    expect(values().answer("item")).toBe("item");
    const evidence = [packet("a1:result", "ZQX-canary-7741"), packet("a1:out1", 3)];
    expect(values().fillAnswer("[a1:result]", evidence)).toBe("ZQX-canary-7741");
    expect(values().fillAnswer("[a9:result] and [a1:out1]", evidence)).toBe("[a9:result] and 3");
    expect(OPEN_PRIVACY.fillAnswer("[a1:result]", evidence)).toBe("[a1:result]");
  });

  it("shows evidence values only for a shown result; tables by name and columns", () => {
    expect(values().value(packet("a1:result", 203))).toBe("203");
    expect(values().value(packet("a1:result", "Widget"))).toBe("(kept on this machine)");
    expect(values().value(packet("a1:out1", 203))).toBe("(kept on this machine)");
    expect(schema().value(packet("a1:result", 203))).toBe("(kept on this machine)");
  });

  it("replaces earlier answers in a worker's question as `answer` shows them", () => {
    const text = "Already found: - s1: Widget\n- s2: 42";
    expect(values().shownAnswers(text, ["Widget", "42"])).toBe(
      "Already found: - s1: (an answer of 6 characters, kept on this machine)\n- s2: 42",
    );
  });

  it("writes numbers the way the scrub reads them back", () => {
    expect(shownNumber(414686.3701)).toBe("414686");
    expect(shownNumber(5.333333)).toBe("5.33333");
    expect(shownNumber(12)).toBe("12");
  });
});

describe("the run's privacy", () => {
  afterEach(() => {
    resetOperatorSettings();
    delete process.env.TABLEMINDS_PRIVACY;
  });

  it("is at least the operator's floor: a run may be stricter, never looser", () => {
    process.env.TABLEMINDS_PRIVACY = "values";
    expect(configurationOf({ context: { privacy: "off" } }).privacy).toBe("values");
    expect(configurationOf({ context: { privacy: "schema" } }).privacy).toBe("schema");
    setOperatorSettings({ privacy: "schema" });
    expect(configurationOf({ context: {} }).privacy).toBe("schema");
  });

  it("stops on a TABLEMINDS_PRIVACY that is not a mode instead of running without one", () => {
    process.env.TABLEMINDS_PRIVACY = "vaules";
    expect(() => configurationOf({ context: {} })).toThrow(/not a privacy mode/);
  });

  it("sends no prompt built without the run's privacy", async () => {
    const config = ensureConfiguration({ privacy: "values", model: "never-called" });
    await expect(ask("planner", "# tableminds planner", "Question: ?", config)).rejects.toThrow(
      PrivacyError,
    );
    await expect(
      ask("planner", "# tableminds planner", "Question: ?", config, undefined, {
        privacy: OPEN_PRIVACY,
      }),
    ).rejects.toThrow(/built without the run's privacy \(values\)/);
  });
});
