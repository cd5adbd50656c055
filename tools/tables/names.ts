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
  /** One sentence per renamed column. */
  warnings: string[];
}

/**
 * Gives unnamed columns `column_<position>` and repeated names `_2`, `_3`, ...,
 * never producing a name that another column already has.
 */
export function uniqueColumnNames(header: readonly string[]): ColumnNaming {
  const given = new Set(header.filter((name) => name.trim() !== ""));
  const used = new Set<string>();
  const names: string[] = [];
  const warnings: string[] = [];
  const free = (base: string, first: number): string => {
    for (let k = first; ; k++) {
      const candidate = k === 1 ? base : `${base}_${k}`;
      if (!used.has(candidate) && !given.has(candidate)) return candidate;
    }
  };
  for (const [i, name] of header.entries()) {
    let final = name;
    if (name.trim() === "") {
      final = free(`column_${i + 1}`, 1);
      warnings.push(`column ${i + 1} has no name; named it "${final}"`);
    } else if (used.has(name)) {
      final = free(name, 2);
      warnings.push(`column ${i + 1} repeats the name "${name}"; renamed it "${final}"`);
    }
    used.add(final);
    names.push(final);
  }
  return { names, warnings };
}
