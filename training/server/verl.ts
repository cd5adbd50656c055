import { readFile, writeFile } from "node:fs/promises";

const TEMPLATE = new URL("./verl_reward.py", import.meta.url);

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
