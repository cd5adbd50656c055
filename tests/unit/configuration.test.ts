import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationSchema, ContextSchema } from "../../blackboard/configuration.js";
import { ConfigurationError, configurationOf } from "../../nodes/runtime.js";

describe("the run configuration", () => {
  it("shows Studio and the SDK the configuration's own schema, defaults included", () => {
    const shown = z.toJSONSchema(ContextSchema, { io: "input" });
    expect(shown).toEqual(z.toJSONSchema(ConfigurationSchema.partial(), { io: "input" }));
    expect(shown.properties?.temperature).toMatchObject({ default: 0, maximum: 2 });
  });

  it("lets a bad value through LangGraph's check, to be reported in one line by the nodes", () => {
    expect(() => ContextSchema.parse({ temperature: 7, sandbox: "moon" })).not.toThrow();
    const bad = { context: { temperature: 7, sandbox: "moon" } };
    expect(() => configurationOf(bad)).toThrow(ConfigurationError);
    expect(() => configurationOf(bad)).toThrow(
      /^invalid run configuration: temperature: Too big: expected number to be <=2; sandbox: Invalid option: expected one of "local"\|"e2b"$/,
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
