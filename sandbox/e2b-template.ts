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
  env: NodeJS.ProcessEnv,
): { template: string; source: TemplateSource } {
  if (option) return { template: option, source: "option" };
  const fromEnv = env.E2B_TEMPLATE?.trim();
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
  const { template, source } = chooseTemplate(undefined, env);
  const perRequest = env.E2B_SANDBOX_PER_REQUEST?.trim().toLowerCase() ?? "";
  return {
    keySet: Boolean(env.E2B_API_KEY?.trim()),
    domain: env.E2B_DOMAIN?.trim() || "e2b.app (E2B's cloud)",
    template,
    source,
    sandboxPerRequest: ["1", "true", "yes"].includes(perRequest),
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
