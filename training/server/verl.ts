import { readFile, writeFile } from "node:fs/promises";

const TEMPLATE = new URL("./verl_reward.py", import.meta.url);

/**
 * How verl (0.9.1) takes the module: its trainer's reward loop resolves `reward.reward_manager`
 * from a registry (naive, dapo, gdpo, remote, rate_limited; no batch manager), and the naive
 * manager calls `compute_score` once per sample, in its executor's threads. The module only
 * waits on HTTP, so threads suffice (`remote` runs each call in a Ray worker process).
 */
export const VERL_REWARD_MANAGER = "naive";
/** The function of the module verl calls. */
export const VERL_REWARD_FUNCTION = "compute_score";

/**
 * verl's command-line overrides for the module at `file`. The keys are under `reward.`: 0.9.1's
 * main_ppo reads only those. It still accepts the top-level `custom_reward_function.*` and
 * `reward_model.reward_manager` of older releases on its command line, and ignores them.
 */
export function verlRewardOverrides(file: string): string[] {
  return [
    `reward.reward_manager.name=${VERL_REWARD_MANAGER}`,
    `reward.custom_reward_function.path=${file}`,
    `reward.custom_reward_function.name=${VERL_REWARD_FUNCTION}`,
  ];
}

/** The verl reward module, with `defaultUrl` as the server when TABLEMINDS_REWARD_URL is unset. */
export async function verlModuleSource(defaultUrl?: string): Promise<string> {
  const source = await readFile(TEMPLATE, "utf8");
  if (!defaultUrl) return source;
  return source.replace(/^DEFAULT_URL = .*$/m, `DEFAULT_URL = ${JSON.stringify(defaultUrl)}`);
}

/** Writes the verl reward module to `file`. */
export async function writeVerlModule(file: string, defaultUrl?: string): Promise<void> {
  await writeFile(file, await verlModuleSource(defaultUrl), "utf8");
}
