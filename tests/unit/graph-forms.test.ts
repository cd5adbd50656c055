import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { context as mcts } from "../../graphs/mcts/configuration.js";
import { context as mom } from "../../graphs/mom/configuration.js";
import { context as orchestrator } from "../../graphs/orchestrator/configuration.js";
import { context as solve } from "../../graphs/solve/configuration.js";
import { context as tableQa } from "../../graphs/table_qa/configuration.js";
import {
  ConfigurationSchema,
  FIELD_GROUPS,
  OPERATOR_FIELDS,
} from "../../settings/configuration.js";
import { relativeImports } from "../support/imports.js";

const root = path.resolve(import.meta.dirname, "../..");
const FIELDS = new Set(Object.keys(ConfigurationSchema.shape));

const FORMS = { solve, table_qa: tableQa, mom, mcts, orchestrator };

const shown = (schema: z.ZodType) =>
  Object.keys(z.toJSONSchema(schema, { io: "input" }).properties ?? {});

/** The project's TypeScript files `entry` reaches through its relative imports. */
function closure(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [path.join(root, entry)];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of relativeImports(file)) {
      const target = imported.replace(/\.js$/, ".ts");
      if (existsSync(target) && target.endsWith(".ts")) stack.push(target);
    }
  }
  return [...seen];
}

/**
 * The configuration fields the code of a graph reads: `config.x`, `configuration.x`,
 * `configurationOf(...).x`, `{ x, y } = config` and `Pick<Configuration, "x" | "y">`.
 */
function fieldsRead(entry: string): Set<string> {
  const read = new Set<string>();
  const add = (name: string | undefined) => {
    if (name && FIELDS.has(name)) read.add(name);
  };
  for (const file of closure(entry)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\b(?:config|configuration|cfg)\??\.(\w+)/g)) add(m[1]);
    for (const m of text.matchAll(/configurationOf\([^()]*\)\.(\w+)/g)) add(m[1]);
    for (const m of text.matchAll(/\{([\w\s,:]+)\}\s*=\s*(?:config|configuration)\b/g)) {
      for (const name of (m[1] ?? "").split(",")) add(name.split(":")[0]?.trim());
    }
    for (const m of text.matchAll(/Pick<\s*Configuration,\s*([^>]+)>/g)) {
      for (const name of (m[1] ?? "").matchAll(/"(\w+)"/g)) add(name[1]);
    }
  }
  return read;
}

describe("each graph's form", () => {
  it.each(Object.entries(FORMS))("%s shows every field its code reads", (name, form) => {
    const entry = `graphs/${name}/graph.ts`;
    const read = [...fieldsRead(entry)].filter(
      (field) => !(OPERATOR_FIELDS as readonly string[]).includes(field),
    );
    expect(read.length).toBeGreaterThan(5);
    const missing = read.filter((field) => !shown(form).includes(field));
    expect(missing).toEqual([]);
  });

  it("shows a graph only the groups it reads", () => {
    const groupOf = (group: keyof typeof FIELD_GROUPS) => Object.keys(FIELD_GROUPS[group]);
    expect(shown(tableQa)).toEqual(
      expect.arrayContaining([...groupOf("memory"), "maxReflections"]),
    );
    for (const other of ["vote", "search", "orchestration", "concurrency", "command"] as const) {
      for (const field of groupOf(other)) expect(shown(tableQa)).not.toContain(field);
    }
    for (const field of groupOf("memory")) {
      expect(shown(mom)).not.toContain(field);
      expect(shown(mcts)).not.toContain(field);
    }
    expect(shown(mom)).toContain("plans");
    expect(shown(mom)).not.toContain("searchBudget");
    expect(shown(mcts)).toContain("searchBudget");
    expect(shown(mcts)).not.toContain("plans");
    expect(shown(orchestrator)).toContain("maxSubtasks");
    expect(shown(orchestrator)).not.toContain("workersDir");
    expect(shown(tableQa).length).toBeLessThan(Object.keys(ConfigurationSchema.shape).length - 12);
  });

  it("passes the other groups' keys through, for the subgraphs and branches a graph runs", () => {
    expect(solve.parse({ plans: 4, temperature: 0.5 })).toMatchObject({
      plans: 4,
      temperature: 0.5,
    });
  });

  it("finds the reads it checks", () => {
    const read = fieldsRead("graphs/mom/graph.ts");
    expect(read).toContain("plans");
    expect(read).toContain("maxCodeAttempts");
    expect(fieldsRead("graphs/solve/graph.ts")).not.toContain("searchBudget");
  });
});
