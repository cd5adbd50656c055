import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { graph } from "../../graphs/table_qa/graph.js";
import type { Configuration } from "../../settings/configuration.js";
import { MEDALS_QUESTION } from "./scripts.js";

/** Points the artifact store at a fresh temporary directory for this test file. */
export function useTempHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-test-"));
  process.env.TABLEMINDS_HOME = home;
  return home;
}

/** Routes every model call of this process to a stub endpoint. */
export function useStubEndpoint(url: string): void {
  process.env.OPENAI_BASE_URL = url;
  process.env.OPENAI_API_KEY = "test-key";
  process.env.TABLEMINDS_MODEL = "stub-model";
}

export const EXAMPLES = path.resolve(import.meta.dirname, "../../examples");

/** The medals question over the example table, as a graph's input. */
export const MEDALS_INPUT = {
  question: MEDALS_QUESTION,
  sources: [{ path: `${EXAMPLES}/olympics_2020_medals.csv` }],
};

type InvokeOptions = NonNullable<Parameters<typeof graph.invoke>[1]>;

/** LangGraph types `context` with every key present; a run passes any subset. */
export function withContext(context: Partial<Configuration>): InvokeOptions {
  return { context: context as InvokeOptions["context"] };
}

/** The environment a CLI subprocess needs to use a stub endpoint, with its own home. */
export function stubEnv(url: string): Record<string, string | undefined> {
  return {
    OPENAI_BASE_URL: url,
    OPENAI_API_KEY: "test-key",
    TABLEMINDS_MODEL: "stub-model",
    TABLEMINDS_HOME: useTempHome(),
  };
}
