import { type ServicesSettings, servicesSettings } from "../settings/services.js";
/**
 * Which E2B template the backend uses, and what `doctor` says about it. No SDK import:
 * `doctor` loads this without loading the `e2b` SDK.
 */

/**
 * E2B's code-interpreter template: Debian with Python 3 and pandas, numpy and friends.
 * The SDK's own default ("base") has Python without pandas, on which the runner fails.
 */
export const DEFAULT_TEMPLATE = "code-interpreter-v1";
export const DEFAULT_TEMPLATE_CONTENTS = "Python 3 with pandas and numpy (E2B's code interpreter)";

export type TemplateSource = "option" | "E2B_TEMPLATE" | "default";

export function chooseTemplate(
  option: string | undefined,
  services: ServicesSettings,
): { template: string; source: TemplateSource } {
  if (option) return { template: option, source: "option" };
  const fromEnv = services.E2B_TEMPLATE;
  if (fromEnv) return { template: fromEnv, source: "E2B_TEMPLATE" };
  return { template: DEFAULT_TEMPLATE, source: "default" };
}

export function describeTemplateChoice(template: string, source: TemplateSource): string {
  if (source === "default") {
    return `${template} (the default: ${DEFAULT_TEMPLATE_CONTENTS}; E2B_TEMPLATE overrides it)`;
  }
  const from = source === "option" ? "the template option" : "E2B_TEMPLATE";
  return `${template} (from ${from}; it must have python3 and pandas, checked when a sandbox starts)`;
}

/** What `tableminds doctor` knows about the E2B setup without calling E2B. */
export interface E2BSetupFacts {
  keySet: boolean;
  domain: string;
  template: string;
  source: TemplateSource;
  sandboxPerRequest: boolean;
}

export function e2bSetupFacts(env: NodeJS.ProcessEnv): E2BSetupFacts {
  const services = servicesSettings(env);
  const { template, source } = chooseTemplate(undefined, services);
  return {
    keySet: Boolean(services.E2B_API_KEY),
    domain: services.E2B_DOMAIN || "e2b.app (E2B's cloud)",
    template,
    source,
    sandboxPerRequest: services.E2B_SANDBOX_PER_REQUEST ?? false,
  };
}

export function e2bDoctorLines(facts: E2BSetupFacts): string[] {
  const state = facts.keySet ? "configured" : "not configured (E2B_API_KEY not set)";
  return [
    `E2B:     ${state}; domain ${facts.domain}`,
    `  template ${describeTemplateChoice(facts.template, facts.source)}`,
    `  ${
      facts.sandboxPerRequest
        ? "one sandbox per request (E2B_SANDBOX_PER_REQUEST): requests never share a VM"
        : "pooled sandboxes: requests share a VM (runner and tables checked by hash, a fresh directory each); E2B_SANDBOX_PER_REQUEST=1 gives each request its own"
    }`,
  ];
}
