import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tablemindsHome } from "../../storage/artifacts.js";
import type { EvalExample } from "../types.js";
import { loadFinQA } from "./finqa.js";
import { DATASETS, type DatasetName, isDataset } from "./names.js";
import { loadTabFact } from "./tabfact.js";
import { loadTableBench } from "./tablebench.js";
import { loadWikiTQ } from "./wikitq.js";

export { DatasetFormatError } from "./format.js";

export { DATASETS, type DatasetName, isDataset } from "./names.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Where CI keeps TableBench: the shared folder beside the repository. */
export const SHARED_TABLEBENCH = path.join(
  REPO_ROOT,
  "..",
  "shared",
  "datasets",
  "tablebench",
  "tablebench_test.jsonl",
);

/** What `tableminds data pull` leaves in a dataset's home: a file, or a directory tree. */
export const PULLED_ENTRY: Record<DatasetName, string> = {
  tablebench: "tablebench_test.jsonl",
  wikitq: "WikiTableQuestions",
  tabfact: "Table-Fact-Checking",
  finqa: "test.json",
};

/** What `--data PATH` may point at, for error messages and help. */
export const DATA_PATH_HINT: Record<DatasetName, string> = {
  tablebench: "TableBench_DP.jsonl, or a directory holding it",
  wikitq: "a WikiTableQuestions checkout or release directory, or its data/<split>.tsv",
  tabfact: "a Table-Fact-Checking checkout, or its tokenized_data/<split>_examples.json",
  finqa: "FinQA's dataset/test.json, or a checkout holding it",
};

/** Where pulled datasets live: `$TABLEMINDS_HOME/datasets/`, or one dataset's folder in it. */
export function datasetHome(name?: string): string {
  const root = path.join(tablemindsHome(), "datasets");
  return name ? path.join(root, name) : root;
}

export interface DatasetLocation {
  path: string;
  origin: "explicit" | "pulled" | "shared";
}

export class DatasetNotFoundError extends Error {
  constructor(
    readonly dataset: DatasetName,
    looked: string[],
  ) {
    super(
      `no copy of ${dataset} found (looked in ${looked.join(", ")}). ` +
        `Run \`tableminds data pull ${dataset}\` on a machine with internet access, ` +
        `or pass --data PATH (${DATA_PATH_HINT[dataset]}).`,
    );
    this.name = "DatasetNotFoundError";
  }
}

function candidates(name: DatasetName): DatasetLocation[] {
  const pulled: DatasetLocation = {
    path: path.join(datasetHome(name), PULLED_ENTRY[name]),
    origin: "pulled",
  };
  return name === "tablebench"
    ? [pulled, { path: path.normalize(SHARED_TABLEBENCH), origin: "shared" }]
    : [pulled];
}

/** The copy `loadDataset` would read without `--data`, or null. */
export function findDataset(name: DatasetName): DatasetLocation | null {
  return candidates(name).find((c) => existsSync(c.path)) ?? null;
}

/** The explicit path, else the pulled copy, else (TableBench only) the shared copy CI has. */
export function locateDataset(name: DatasetName, explicit?: string): DatasetLocation {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`--data ${explicit}: no such file or directory`);
    return { path: explicit, origin: "explicit" };
  }
  const found = findDataset(name);
  if (found) return found;
  throw new DatasetNotFoundError(
    name,
    candidates(name).map((c) => c.path),
  );
}

const isDirectory = (p: string) => statSync(p).isDirectory();

function firstExisting(dir: string, names: string[], what: string): string {
  const found = names.map((n) => path.join(dir, n)).find((p) => existsSync(p));
  if (!found) throw new Error(`${dir}: no ${what} in it (looked for ${names.join(", ")})`);
  return found;
}

/** Each loader from whatever `--data` (or the pulled copy) points at. */
const LOADERS: Record<DatasetName, (p: string) => Promise<EvalExample[]>> = {
  tablebench: (p) =>
    loadTableBench(
      isDirectory(p)
        ? firstExisting(p, ["tablebench_test.jsonl", "TableBench_DP.jsonl"], "TableBench file")
        : p,
    ),
  wikitq: (p) =>
    isDirectory(p)
      ? loadWikiTQ(p)
      : loadWikiTQ(path.dirname(path.dirname(p)), path.basename(p, ".tsv")),
  tabfact: (p) =>
    isDirectory(p) ? loadTabFact(p) : loadTabFact(path.dirname(path.dirname(p)), path.basename(p)),
  finqa: (p) =>
    loadFinQA(
      isDirectory(p) ? firstExisting(p, ["test.json", "dataset/test.json"], "FinQA test.json") : p,
    ),
};

/** A dataset's questions in its own order, at most `limit` of them. */
export async function loadDataset(
  name: string,
  options: { path?: string; limit?: number } = {},
): Promise<EvalExample[]> {
  if (!isDataset(name)) throw new Error(`unknown dataset "${name}"; known: ${DATASETS.join(", ")}`);
  const { limit } = options;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
    throw new Error(`limit must be a whole number >= 0, not ${limit}`);
  }
  const examples = await LOADERS[name](locateDataset(name, options.path).path);
  return limit === undefined ? examples : examples.slice(0, limit);
}
