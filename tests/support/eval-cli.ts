import path from "node:path";

/** The TableBench sample the evaluation tests run on. */
export const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

/** An evaluation of the first `limit` sample questions into `out`, without reflections. */
export function evalArgs(out: string, limit: number, extra: string[] = []): string[] {
  return [
    "eval",
    "--dataset",
    "tablebench",
    "--data",
    SAMPLE,
    "--limit",
    String(limit),
    "--out",
    out,
    "--max-reflections",
    "0",
    ...extra,
  ];
}
