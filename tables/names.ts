const PYTHON_KEYWORDS = [
  "and",
  "as",
  "assert",
  "async",
  "await",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "in",
  "is",
  "lambda",
  "nonlocal",
  "not",
  "or",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
];
// Bound by the sandbox (df, pd, np) or builtins that generated code commonly calls.
const TAKEN_IN_SANDBOX = [
  "df",
  "pd",
  "np",
  "abs",
  "all",
  "any",
  "bool",
  "dict",
  "enumerate",
  "filter",
  "float",
  "format",
  "id",
  "input",
  "int",
  "len",
  "list",
  "map",
  "max",
  "min",
  "next",
  "object",
  "open",
  "print",
  "range",
  "round",
  "set",
  "slice",
  "sorted",
  "str",
  "sum",
  "tuple",
  "type",
  "zip",
];
const RESERVED: ReadonlySet<string> = new Set([...PYTHON_KEYWORDS, ...TAKEN_IN_SANDBOX]);

/**
 * A Python-identifier-safe table name: lower case, anything but [a-z0-9_] becomes `_`,
 * a leading digit gets `t_`, and names Python or the sandbox already use get `_table`.
 */
export function tableName(raw: string): string {
  let name = raw.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  if (name === "" || /^_+$/.test(name)) return "table";
  if (/^[0-9]/.test(name)) name = `t_${name}`;
  return RESERVED.has(name) ? `${name}_table` : name;
}

export interface ColumnNaming {
  names: string[];
  /** One sentence per renamed column, for the user. */
  warnings: string[];
  /**
   * Per column, what its name stands for in the file when the column was renamed (null when
   * it kept its header's name), for the model: `the header's second "value" (column 3)`.
   */
  sources: (string | null)[];
}

const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"];

function ordinal(n: number): string {
  return ORDINALS[n - 1] ?? `${n}th`;
}

/**
 * Gives unnamed columns `column_<position>` and repeated names `_2`, `_3`, ..., never producing
 * a name that another column already has. Names are told apart as SQL tells them apart,
 * ignoring case: `value` and `Value` are one name to DuckDB, which would read the second as
 * the first, so the second is renamed too. Each renamed column says which header cell it is
 * (its position, 1-based, and which of the cells so named).
 */
export function uniqueColumnNames(header: readonly string[]): ColumnNaming {
  const key = (name: string) => name.toLowerCase();
  const given = new Set(header.filter((name) => name.trim() !== "").map(key));
  const used = new Set<string>();
  /** The 1-based positions of the header cells of each name (case ignored). */
  const seen = new Map<string, number[]>();
  const names: string[] = [];
  const warnings: string[] = [];
  const sources: (string | null)[] = [];
  const free = (base: string, first: number): string => {
    for (let k = first; ; k++) {
      const candidate = k === 1 ? base : `${base}_${k}`;
      if (!used.has(key(candidate)) && !given.has(key(candidate))) return candidate;
    }
  };
  for (const [i, name] of header.entries()) {
    const position = i + 1;
    let final = name;
    let source: string | null = null;
    if (name.trim() === "") {
      final = free(`column_${position}`, 1);
      warnings.push(`column ${position} has no name; named it "${final}"`);
      source = `column ${position}, which has no name in the header`;
    } else if (used.has(key(name))) {
      const before = seen.get(key(name)) ?? [];
      const first = before[0] ?? 0;
      const firstName = header[first - 1] ?? name;
      final = free(name, 2);
      if (firstName === name) {
        warnings.push(
          `column ${position} repeats the name "${name}" of column ${first}; renamed it "${final}"`,
        );
        const same = before.filter((p) => header[p - 1] === name).length + 1;
        source = `the header's ${ordinal(same)} "${name}" (column ${position})`;
      } else {
        warnings.push(
          `column ${position} "${name}" differs from column ${first} "${firstName}" only in case, ` +
            `which SQL does not tell apart; renamed it "${final}"`,
        );
        source = `the header's "${name}" (column ${position}), not "${firstName}" (column ${first})`;
      }
    }
    if (name.trim() !== "") seen.set(key(name), [...(seen.get(key(name)) ?? []), position]);
    used.add(key(final));
    names.push(final);
    sources.push(source);
  }
  return { names, warnings, sources };
}
