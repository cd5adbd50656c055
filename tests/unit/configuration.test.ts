import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError, configurationOf } from "../../nodes/runtime.js";
import {
  ConfigurationSchema,
  contextSchemaOf,
  FIELD_GROUPS,
  type FieldGroup,
  OPERATOR_FIELDS,
} from "../../settings/configuration.js";

/** The form of a graph that read every group a graph may read (all but the command's). */
const ContextSchema = contextSchemaOf(
  ...(Object.keys(FIELD_GROUPS) as FieldGroup[]).filter((group) => group !== "command"),
);

describe("the run configuration", () => {
  it("shows Studio and the SDK the configuration's own schema, defaults included", () => {
    const shown = z.toJSONSchema(ContextSchema, { io: "input" });
    const callers = ConfigurationSchema.omit({
      sandbox: true,
      replayCache: true,
      workersDir: true,
      // Read by `tableminds ask` alone, never by a graph.
      runTimeoutMs: true,
      localBudgetMs: true,
    });
    expect(shown).toEqual(z.toJSONSchema(z.looseObject(callers.partial().shape), { io: "input" }));
    for (const key of OPERATOR_FIELDS) expect(shown.properties).not.toHaveProperty(key);
    expect(shown.properties?.temperature).toMatchObject({ default: 0, maximum: 2 });
  });

  it("lets Studio's form and the SDK say how tables are read", () => {
    const shown = z.toJSONSchema(ContextSchema, { io: "input" }).properties ?? {};
    for (const key of ["rawTables", "headerRows", "skipRows", "sheet", "locale"]) {
      expect(shown).toHaveProperty(key);
    }
    expect(() => configurationOf({ context: { locale: "de; rm -rf" } })).toThrow(
      /locale: a locale such as de, fr-FR or en-US/,
    );
    expect(configurationOf({ context: { headerRows: 2, locale: "de-DE" } })).toMatchObject({
      headerRows: 2,
      locale: "de-DE",
      rawTables: false,
    });
  });

  it("lets a bad value through LangGraph's check, to be reported in one line by the nodes", () => {
    expect(() => ContextSchema.parse({ temperature: 7, judge: "moon" })).not.toThrow();
    const bad = { context: { temperature: 7, judge: "moon" } };
    expect(() => configurationOf(bad)).toThrow(ConfigurationError);
    expect(() => configurationOf(bad)).toThrow(
      /^invalid run configuration: temperature: Too big: expected number to be <=2; judge: Invalid option: expected one of "off"\|"text"\|"always"$/,
    );
  });

  it("fills the defaults into a partial context", () => {
    expect(configurationOf({ context: { maxReflections: 0 } })).toMatchObject({
      maxReflections: 0,
      check: true,
      sandbox: "local",
    });
  });
});
