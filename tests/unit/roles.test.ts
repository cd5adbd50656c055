import { describe, expect, it } from "vitest";
import { resolveModel } from "../../models/config.js";
import { modelsOf, temperatureOf } from "../../nodes/llm.js";
import { ENVIRONMENT } from "../../scripts/docs-config.js";
import { ConfigurationSchema, ensureConfiguration } from "../../settings/configuration.js";
import {
  ROLE_TABLE,
  ROLES,
  roleEnvVar,
  roleModelField,
  roleTemperatureField,
} from "../../settings/roles.js";

describe("the table of model roles", () => {
  it("gives each role its model field, its variable and its line in the docs", () => {
    expect(ROLES).toEqual(["planner", "coder", "answerer", "checker", "reflector", "archiver"]);
    const fields = ConfigurationSchema.shape as Record<string, { description?: string }>;
    for (const role of ROLES) {
      expect(fields[roleModelField(role)]?.description).toBe(ROLE_TABLE[role].model);
      const variable = ENVIRONMENT.find((v) => v.name === roleEnvVar(role));
      expect(variable?.meaning).toContain(ROLE_TABLE[role].does);
    }
    expect(roleEnvVar("reflector")).toBe("TABLEMINDS_REFLECTOR_MODEL");
  });

  it("resolves each role's model from its own field, else its variable, else the shared ones", () => {
    const env = { OPENAI_API_KEY: "k", TABLEMINDS_MODEL: "shared" };
    for (const role of ROLES) {
      const config = ensureConfiguration({ [roleModelField(role)]: `${role}-own` });
      expect(resolveModel(role, modelsOf(config), env).model).toBe(`${role}-own`);
      const byVariable = { ...env, [roleEnvVar(role)]: `${role}-var` };
      expect(resolveModel(role, modelsOf(ensureConfiguration({})), byVariable).model).toBe(
        `${role}-var`,
      );
      expect(resolveModel(role, {}, env).model).toBe("shared");
      // Another role's variable is not this one's.
      const other = ROLES.find((r) => r !== role) ?? role;
      expect(resolveModel(role, {}, { ...env, [roleEnvVar(other)]: "x" }).model).toBe("shared");
    }
  });

  it("gives a temperature field only to the roles the table says, else the run's temperature", () => {
    const tempered = ROLES.filter((role) => roleTemperatureField(role) !== undefined);
    expect(tempered).toEqual(["planner", "coder", "answerer"]);
    const config = ensureConfiguration({ temperature: 0.3, coderTemperature: 0.9 });
    expect(temperatureOf("coder", config)).toBe(0.9);
    expect(temperatureOf("planner", config)).toBe(0.3);
    expect(temperatureOf("checker", config)).toBe(0.3);
    expect(ConfigurationSchema.shape).not.toHaveProperty("checkerTemperature");
  });
});
