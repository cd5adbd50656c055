import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tablemindsHome } from "../../blackboard/artifacts.js";
import type { EvalExample } from "../types.js";
import { loadFinQA } from "./finqa.js";
import { loadTabFact } from "./tabfact.js";
import { loadTableBench } from "./tablebench.js";
import { loadWikiTQ } from "./wikitq.js";

export const DATASETS = ["tablebench", "wikitq", "tabfact", "finqa"] as const;
export type DatasetName = (typeof DATASETS)[number];

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** What a dataset's home holds: TableBench is one file, WikiTQ and TabFact directory trees. */
const FILES: Record<DatasetName, string> = {
  tablebench: "tablebench_test.jsonl",
  wikitq: "WikiTableQuestions",
  tabfact: "Table-Fact-Checking-master",
  finqa: "test.json",
};
const UPSTREAM: Record<DatasetName, string> = {
  tablebench: "https://huggingface.co/datasets/Multilingual-Multimodal-NLP/TableBench",
  wikitq: "https://github.com/ppasupat/WikiTableQuestions (the whole repository)",
  tabfact: "https://github.com/wenhuchen/Table-Fact-Checking (tokenized_data/ and data/all_csv/)",
  finqa: "https://github.com/czyssrs/FinQA (dataset/test.json)",
};

/** Where datasets are kept on this machine: `$TABLEMINDS_HOME/datasets/<name>/`. */
export function datasetHome(name: string): string {
  return path.join(tablemindsHome(), "datasets", name);
}

/** The file to load: an explicit path, the copy in the dataset home, or the repository's shared copy. */
export function resolveDatasetFile(name: DatasetName, explicit?: string): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`${explicit}: no such file`);
    return explicit;
  }
  const candidates = [
    path.join(datasetHome(name), FILES[name]),
    path.join(ROOT, "..", "shared", "datasets", name, FILES[name]),
  ].map((p) => path.normalize(p));
  const found = candidates.find((file) => existsSync(file));
  if (found) return found;
  throw new Error(
    `no copy of ${name} found (looked in ${candidates.join(", ")}); ` +
      `download it from ${UPSTREAM[name]} into ${datasetHome(name)}, or pass --data PATH`,
  );
}

export function isDataset(name: string): name is DatasetName {
  return (DATASETS as readonly string[]).includes(name);
}

/** A dataset's questions in its own order, at most `limit` of them. */
export async function loadDataset(
  name: string,
  options: { path?: string; limit?: number } = {},
): Promise<EvalExample[]> {
  if (!isDataset(name)) throw new Error(`unknown dataset "${name}"; known: ${DATASETS.join(", ")}`);
  const source = resolveDatasetFile(name, options.path);
  const loaders: Record<DatasetName, (source: string) => Promise<EvalExample[]>> = {
    tablebench: loadTableBench,
    wikitq: (root) => loadWikiTQ(root),
    tabfact: loadTabFact,
    finqa: loadFinQA,
  };
  const examples = await loaders[name](source);
  return options.limit === undefined ? examples : examples.slice(0, options.limit);
}
