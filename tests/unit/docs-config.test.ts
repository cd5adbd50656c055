import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CONFIGURATION_DOC,
  ENVIRONMENT,
  environmentNamesInCode,
  fieldReferences,
  generatedParts,
  markedParts,
  ROOT,
  renderFieldTable,
  withGeneratedParts,
} from "../../scripts/docs-config.js";
import { ConfigurationSchema } from "../../settings/configuration.js";

const doc = () => readFileSync(path.join(ROOT, CONFIGURATION_DOC), "utf8");

describe("docs/configuration.md", () => {
  it("is current: every configuration field and environment variable as the code has them", () => {
    const text = doc();
    expect(markedParts(text).sort()).toEqual(["environment", "fields"]);
    // When this fails, run `npm run docs:config` and read what changed.
    expect(withGeneratedParts(text, generatedParts())).toBe(text);
  });

  it("describes every variable the code names, and none it no longer names", () => {
    const listed = ENVIRONMENT.map((variable) => variable.name);
    const named = environmentNamesInCode();
    // A name here is read (or set) somewhere in the code: describe it in ENVIRONMENT,
    // scripts/docs-config.ts, then run `npm run docs:config`.
    expect(named.filter((name) => !listed.includes(name))).toEqual([]);
    // Listed, but nothing names it any more: take it out of ENVIRONMENT.
    const readByLibraries = ["LANGSMITH_TRACING"];
    expect(
      listed.filter((name) => !named.includes(name) && !readByLibraries.includes(name)),
    ).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
    for (const variable of ENVIRONMENT) expect(variable.meaning.length).toBeGreaterThan(0);
  });
});

describe("the configuration reference", () => {
  const fields = fieldReferences();

  it("has a row for each field of the schema, with its description", () => {
    expect(fields.map((field) => field.key)).toEqual(Object.keys(ConfigurationSchema.shape));
    for (const field of fields) expect(field.description).not.toBe("");
  });

  it("reads type, range, default and flag from the schema and the CLI", () => {
    const byKey = new Map(fields.map((field) => [field.key, field]));
    expect(byKey.get("maxCodeAttempts")).toMatchObject({
      type: "integer",
      allowed: "1 to 10",
      default: "`3`",
      flag: "--max-code-attempts <n>",
      commands: ["ask", "eval run", "mine"],
    });
    expect(byKey.get("execTimeoutMs")).toMatchObject({
      allowed: "> 0, <= 600000",
      default: "`15000` (15 s)",
      flag: "--exec-timeout <ms>",
    });
    expect(byKey.get("check")).toMatchObject({ type: "boolean", flag: "--no-check" });
    expect(byKey.get("sandbox")).toMatchObject({ type: "choice", allowed: "`local`, `e2b`" });
    // serve-reward has a --sandbox of its own, which is not the configuration's.
    expect(byKey.get("sandbox")?.commands).not.toContain("serve-reward");
    // Only `ask` keeps long-term memory; mine leaves the search mode to its stage.
    expect(byKey.get("memory")?.commands).toEqual(["ask"]);
    expect(byKey.get("searchMode")?.commands).not.toContain("mine");
    expect(byKey.get("memoryK")?.flag).toBeUndefined();
  });

  it("escapes what would break a table row", () => {
    const table = renderFieldTable([
      {
        key: "k",
        type: "string",
        allowed: "any",
        default: "unset",
        commands: [],
        description: "a | b\nc",
      },
    ]);
    expect(table.split("\n").at(-1)).toBe(
      "| `k` | string | any | unset | none: context or Studio only | a \\| b c |",
    );
  });

  it("replaces only what stands between a part's markers", () => {
    const text = "a\n<!-- generated:x -->\nold\n<!-- /generated:x -->\nb\n";
    expect(withGeneratedParts(text, { x: "new" })).toBe(
      "a\n<!-- generated:x -->\nnew\n<!-- /generated:x -->\nb\n",
    );
    expect(withGeneratedParts(text, {})).toBe(text);
  });
});
