import { z } from "zod";
import { blank } from "./env-values.js";

/*
 * The outside services this process may be pointed at from the environment (E2B, LangSmith, a
 * mirror of the benchmark datasets), declared once. Each is optional: unset, the service is
 * not used or its public default is.
 */

const Text = z.preprocess(blank, z.string().trim().optional());
/** `1`, `true` or `yes` (any case) is on; anything else set is off. */
const Flag = z.preprocess(
  blank,
  z
    .string()
    .transform((v) => ["1", "true", "yes"].includes(v.trim().toLowerCase()))
    .optional(),
);

export const ServicesEnvSchema = z.object({
  E2B_API_KEY: Text,
  /** A self-hosted E2B. */
  E2B_DOMAIN: Text,
  /** A template with python3 and pandas. */
  E2B_TEMPLATE: Text,
  E2B_SANDBOX_PER_REQUEST: Flag,
  LANGSMITH_API_KEY: Text,
  LANGSMITH_ENDPOINT: Text,
  /** The older name of LANGSMITH_ENDPOINT, read when that is unset. */
  LANGCHAIN_ENDPOINT: Text,
  /** A base URL standing in for the datasets' upstream hosts. */
  TABLEMINDS_DATA_MIRROR: Text,
});
export type ServicesSettings = z.infer<typeof ServicesEnvSchema>;

export function servicesSettings(env: NodeJS.ProcessEnv = process.env): ServicesSettings {
  return ServicesEnvSchema.parse(env);
}

/** LangSmith's API endpoint: LANGSMITH_ENDPOINT, else LANGCHAIN_ENDPOINT, else its cloud. */
export function langsmithEndpoint(env?: NodeJS.ProcessEnv): string {
  const given = servicesSettings(env);
  return given.LANGSMITH_ENDPOINT || given.LANGCHAIN_ENDPOINT || "https://api.smith.langchain.com";
}
