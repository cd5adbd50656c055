/**
 * A scripted coder that writes the obvious pandas code for a question (bench/messy-tables.ts):
 * it gets a small spec of the question (tests/fixtures/messy/obvious.json: an operation, the
 * column as a header path, filters), resolves each path against the column names it is shown
 * (the most words in common; among those, the name with the fewest other words; then the
 * first; the first column when no name shares a word), and computes over the DataFrame as
 * loaded. What it prints is compared with the
 * hand-checked answer.
 */
import { z } from "zod";

const PathSchema = z.array(z.string().min(1)).min(1);

const FilterSchema = z.object({
  column: PathSchema,
  equals: z.union([z.string(), z.number(), z.boolean()]),
});

export const ObviousSpecSchema = z
  .object({
    op: z.enum(["sum", "max", "min", "mean", "count", "lookup"]),
    column: PathSchema.optional(),
    /** For max and min: the answer is this column's value in the row holding the extreme. */
    label: PathSchema.optional(),
    filter: z.array(FilterSchema).optional(),
    /** An absolute tolerance for a rounded answer. */
    tolerance: z.number().positive().optional(),
  })
  .refine((spec) => spec.op === "count" || spec.column !== undefined, {
    message: "every operation but count needs a column",
  });
export type ObviousSpec = z.infer<typeof ObviousSpecSchema>;

const SkipSchema = z.object({ skip: z.string().min(1) });

/** A question's spec, or why one step over one column cannot answer it. */
const EntrySchema = z.union([SkipSchema.strict(), ObviousSpecSchema]);

export const ObviousFileSchema = z.object({
  description: z.string(),
  spreadsheets: z.array(z.object({ question: z.string() }).passthrough()),
  tablebench: z.array(z.object({ id: z.string() }).passthrough()),
});

/** A spec, or the reason the question is left out; throws on a malformed entry. */
export function parseEntry(entry: Record<string, unknown>): ObviousSpec | { skip: string } {
  const { question: _q, id: _id, ...rest } = entry;
  return EntrySchema.parse(rest);
}

/** Lower-case words of a name or path: runs of letters and digits, and the signs % and #. */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+|[%#]/gu) ?? []
  );
}

/**
 * The shown column a header path stands for: most words in common with the path; among
 * those, the fewest words of its own the path does not have; then the first. With no word in
 * common anywhere, the first column.
 */
export function resolveColumn(path: readonly string[], names: readonly string[]): string {
  const wanted = new Set(words(path.join(" ")));
  let best: { name: string; common: number; extra: number } | undefined;
  for (const name of names) {
    const own = words(name);
    const common = new Set(own.filter((word) => wanted.has(word))).size;
    const extra = own.filter((word) => !wanted.has(word)).length;
    const better =
      !best || common > best.common || (common > 0 && common === best.common && extra < best.extra);
    if (better) best = { name, common, extra };
  }
  if (!best) throw new Error("a table without columns");
  return best.name;
}

/** How well a table's names cover a spec's paths (the sum of the best words in common). */
export function coverage(spec: ObviousSpec, names: readonly string[]): number {
  const paths = [spec.column, spec.label, ...(spec.filter ?? []).map((f) => f.column)];
  let total = 0;
  for (const path of paths) {
    if (!path) continue;
    const wanted = new Set(words(path.join(" ")));
    total += Math.max(0, ...names.map((n) => new Set(words(n).filter((w) => wanted.has(w))).size));
  }
  return total;
}

/** A Python string literal (JSON's escapes are Python's). */
const py = (text: string) => JSON.stringify(text);

/** The pandas code the coder writes for `spec` over `df`, its columns named `names`. */
export function obviousCode(spec: ObviousSpec, names: readonly string[]): string {
  const col = (path: readonly string[]) => `d[${py(resolveColumn(path, names))}]`;
  const lines = ["import pandas as pd", "d = df"];
  for (const filter of spec.filter ?? []) {
    const cells = col(filter.column);
    lines.push(
      typeof filter.equals === "number"
        ? `d = d[pd.to_numeric(${cells}, errors="coerce") == ${filter.equals}]`
        : `d = d[${cells}.astype(str).str.strip().str.lower() == ${py(String(filter.equals).toLowerCase())}]`,
    );
  }
  if (spec.op === "count") {
    lines.push("print(len(d))");
    return lines.join("\n");
  }
  const column = spec.column ?? [];
  if (spec.op === "lookup") {
    lines.push(`print(${col(column)}.iloc[0])`);
    return lines.join("\n");
  }
  lines.push(`v = pd.to_numeric(${col(column)}, errors="coerce")`);
  if (spec.label && (spec.op === "max" || spec.op === "min")) {
    lines.push(`print(${col(spec.label)}.loc[v.idx${spec.op}()])`);
  } else {
    lines.push(`print(v.${spec.op}())`);
  }
  return lines.join("\n");
}

/** Decimal places written in a numeric answer ("10.60" has 2). */
function decimals(text: string): number {
  return /\.(\d+)$/.exec(text.trim())?.[1]?.length ?? 0;
}

/**
 * Whether `printed` (the code's last output line) is the answer: numbers within 1e-6
 * relative, within `tolerance`, or within half a unit of the last place a text answer is
 * written to ("10.6" takes 10.55 to 10.65); text compared trimmed and case-insensitively.
 */
export function sameAnswer(printed: string, answer: string | number, tolerance?: number): boolean {
  const got = printed.trim();
  const gold = String(answer).trim();
  const x = Number(got);
  const y = Number(gold);
  if (got !== "" && gold !== "" && Number.isFinite(x) && Number.isFinite(y)) {
    const slack = Math.max(
      1e-6 * Math.max(Math.abs(x), Math.abs(y)),
      tolerance ?? 0,
      typeof answer === "string" && decimals(gold) > 0 ? 0.5 * 10 ** -decimals(gold) + 1e-12 : 0,
    );
    return Math.abs(x - y) <= slack;
  }
  return got.toLowerCase() === gold.toLowerCase();
}
