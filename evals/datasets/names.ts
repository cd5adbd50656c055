/** The datasets tableminds loads and scores; a module of its own so the CLI's help loads no loader. */
export const DATASETS = ["tablebench", "wikitq", "tabfact", "finqa"] as const;
export type DatasetName = (typeof DATASETS)[number];

export function isDataset(name: string): name is DatasetName {
  return (DATASETS as readonly string[]).includes(name);
}
