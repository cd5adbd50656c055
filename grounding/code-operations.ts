import { normalizeText } from "./matching.js";
import type { AskedOperation } from "./question-asks.js";

/*
 * The operations code performs, read from its text (pandas, numpy, the standard library, SQL):
 * which aggregations it calls, whether it divides, subtracts, multiplies by 100 or sorts. The
 * text is read with its comments and string literals taken out, so a column named "mean" is
 * not a mean.
 */

export interface CodeOperations {
  /** Aggregations called, in the question's terms. */
  aggregates: Set<AskedOperation>;
  divides: boolean;
  /** A multiplication by 100: a share turned into a percentage. */
  hundred: boolean;
  /** A division by 100: a percentage turned into a fraction. */
  perHundred: boolean;
  sorts: boolean;
  /** Number literals of the code, as written. */
  literals: number[];
  /** String literals of the code, normalized. */
  strings: string[];
  /** The code without comments and string contents. */
  bare: string;
}

/** Code without comments and with each string literal emptied. */
export function bareCode(code: string): string {
  return code
    .replace(/("""|''')[\s\S]*?\1/g, '""')
    .replace(/(["'])(?:\\.|(?!\1)[^\\\n])*\1/g, '""')
    .replace(/#.*$/gm, "")
    .replace(/--.*$/gm, "");
}

const AGGREGATES: [AskedOperation, RegExp][] = [
  ["median", /\.median\(|\bmedian\s*\(|quantile\(\s*0?\.50?\s*\)|percentile\([^)]*,\s*50\s*\)/i],
  ["mean", /\.mean\(|\bnp\.(?:nan)?mean\(|\bnp\.average\(|\bmean\s*\(|\bfmean\(|\bavg\s*\(/i],
  ["sum", /\.sum\(|\bnp\.(?:nan)?sum\(|\bsum\s*\(|\.cumsum\(/i],
  ["max", /\.max\(|\bmax\s*\(|idxmax|nlargest|argmax|\.cummax\(/i],
  ["min", /\.min\(|\bmin\s*\(|idxmin|nsmallest|argmin|\.cummin\(/i],
  ["std", /\.std\(|\bnp\.std\(|\bstdev\(|\bstddev\w*\s*\(/i],
  ["var", /\.var\(|\bnp\.var\(|\bvariance\(|\bvar_\w+\s*\(/i],
  ["count", /\blen\(|\.count\(|\.size\b|\.shape\b|nunique|value_counts|\bcount\s*\(/i],
];

export function codeOperations(code: string): CodeOperations {
  const bare = bareCode(code);
  const aggregates = new Set<AskedOperation>();
  for (const [name, pattern] of AGGREGATES) if (pattern.test(bare)) aggregates.add(name);
  const literals = [...bare.matchAll(/(?<![\w.])(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.])/gi)].map(
    (m) => Number(m[1]),
  );
  return {
    aggregates,
    divides: /[^/*]\/(?![/*])|\.div\(|\btruediv\(|pct_change|normalize\s*=\s*True/.test(bare),
    hundred: /\*\s*100(?:\.0*)?\b|\b100(?:\.0*)?\s*\*|\.mul\(\s*100\b/.test(bare),
    perHundred: /\/\s*100(?:\.0*)?\b|\.div\(\s*100\b/.test(bare),
    sorts: /sort_values|sort_index|\bsorted\(|\.sort\(|\brank\(|order\s+by/i.test(bare),
    literals,
    bare,
    strings: [...code.matchAll(/(["'])((?:\\.|(?!\1)[^\\\n])*)\1/g)].map((m) =>
      normalizeText(m[2] ?? ""),
    ),
  };
}

/** Columns the code names: as a quoted string or an attribute. */
export function columnsInCode(code: string, columns: readonly string[]): string[] {
  return columns.filter((column) => {
    const quoted = code.includes(`'${column}'`) || code.includes(`"${column}"`);
    const attribute = /^[A-Za-z_]\w*$/.test(column) && new RegExp(`\\.${column}\\b`).test(code);
    return quoted || attribute;
  });
}
