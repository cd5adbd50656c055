/**
 * Reading DuckDB's own parse of a query (`json_serialize_sql`) to decide whether it is
 * one read-only SELECT, which registered tables it reads, and whether the source row of
 * each result row can be traced. Only DuckDB's parser is trusted with the SQL text; this
 * file looks at the tree it returns and splices one column into it.
 */

export type ParseVerdict =
  | { ok: true; statement: Node }
  | { ok: false; kind: "syntax" | "not-read-only"; message: string };

/** A node of the serialized tree; read defensively, its shape is DuckDB's. */
export type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/**
 * The verdict on the output of `json_serialize_sql`: it serializes SELECT statements
 * only, so any other statement (or any second statement) makes it refuse.
 */
export function judgeSerialized(json: string): ParseVerdict {
  // Lossy for integers past 2^53, which only matters for the splice below, done on text.
  const parsed: unknown = JSON.parse(json);
  if (!isNode(parsed)) return { ok: false, kind: "syntax", message: "the query could not be read" };
  if (parsed.error === true) {
    const message = text(parsed.error_message) || "the query could not be parsed";
    if (text(parsed.error_type) === "parser") {
      const at = Number(text(parsed.position));
      const where =
        Number.isInteger(at) && text(parsed.position) !== "" ? ` (at character ${at + 1})` : "";
      const said = /^syntax error/i.test(message) ? message : `syntax error: ${message}`;
      return { ok: false, kind: "syntax", message: `${said}${where}` };
    }
    return {
      ok: false,
      kind: "not-read-only",
      message: "only a read-only query (SELECT, WITH ... SELECT, VALUES, ...) is allowed",
    };
  }
  const statements = Array.isArray(parsed.statements) ? parsed.statements : [];
  const [statement] = statements;
  if (statements.length !== 1 || !isNode(statement)) {
    return {
      ok: false,
      kind: statements.length === 0 ? "syntax" : "not-read-only",
      message:
        statements.length === 0
          ? "the query is empty"
          : `exactly one statement is allowed, got ${statements.length}`,
    };
  }
  return { ok: true, statement };
}

function visit(value: unknown, onNode: (node: Node) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, onNode);
  } else if (isNode(value)) {
    onNode(value);
    for (const child of Object.values(value)) visit(child, onNode);
  }
}

function cteNames(statement: Node): Set<string> {
  const names = new Set<string>();
  visit(statement, (node) => {
    const cteMap = node.cte_map;
    if (!isNode(cteMap) || !Array.isArray(cteMap.map)) return;
    for (const entry of cteMap.map) {
      if (isNode(entry)) names.add(text(entry.key).toLowerCase());
    }
  });
  return names;
}

/** A registered table a base-table reference resolves to, if it does. */
function registeredTarget(node: Node, registered: ReadonlyMap<string, string>): string | null {
  if (node.type !== "BASE_TABLE") return null;
  const schema = text(node.schema_name).toLowerCase();
  const catalog = text(node.catalog_name).toLowerCase();
  if (!["", "main"].includes(schema) || !["", "memory"].includes(catalog)) return null;
  return registered.get(text(node.table_name).toLowerCase()) ?? null;
}

/**
 * The registered tables a statement reads, in order of first mention. `registered` maps
 * lower-cased names to names (DuckDB identifiers are case-insensitive). References
 * that a WITH clause defines are not tables.
 */
export function referencedTables(
  statement: Node,
  registered: ReadonlyMap<string, string>,
): string[] {
  const shadowed = cteNames(statement);
  const found = new Set<string>();
  visit(statement, (node) => {
    const target = registeredTarget(node, registered);
    if (target && !shadowed.has(target.toLowerCase())) found.add(target);
  });
  return [...found];
}

export interface TraceTarget {
  table: string;
  /** The name the query calls the table by (its alias, else its name). */
  qualifier: string;
}

/**
 * The table whose row ids a query's rows can carry: a plain SELECT over one registered
 * table, without WITH, GROUP BY, HAVING or DISTINCT. Aggregates without GROUP BY are not
 * detected here; adding the row-id column to such a query fails to bind, and the
 * caller then runs the query untraced.
 */
export function traceTarget(
  statement: Node,
  registered: ReadonlyMap<string, string>,
): TraceTarget | null {
  const node = statement.node;
  if (!isNode(node) || node.type !== "SELECT_NODE") return null;
  if (cteNames(statement).size > 0) return null;
  const from = node.from_table;
  if (!isNode(from)) return null;
  const table = registeredTarget(from, registered);
  if (table === null) return null;
  const grouped =
    (Array.isArray(node.group_expressions) && node.group_expressions.length > 0) ||
    (Array.isArray(node.group_sets) && node.group_sets.length > 0) ||
    node.having !== null ||
    node.aggregate_handling !== "STANDARD_HANDLING";
  if (grouped) return null;
  const modifiers = Array.isArray(node.modifiers) ? node.modifiers : [];
  if (modifiers.some((m) => isNode(m) && m.type === "DISTINCT_MODIFIER")) return null;
  return { table, qualifier: text(from.alias) || text(from.table_name) };
}

/** Index just past the string literal that opens at `start` in JSON text. */
function skipString(json: string, start: number): number {
  let i = start + 1;
  while (i < json.length && json[i] !== '"') i += json[i] === "\\" ? 2 : 1;
  return i + 1;
}

/**
 * Inserts `item` (JSON text) as the last element of the top statement's select list,
 * working on the text so that large integers in the tree keep every digit. Returns
 * null when the list is not where the serializer puts it.
 */
export function appendToSelectList(json: string, item: string): string | null {
  // Depths: 1 the root object, 2 `statements`, 3 the statement, 4 its `node`.
  const NODE_DEPTH = 4;
  let depth = 0;
  let listDepth = -1;
  let i = 0;
  while (i < json.length) {
    const c = json[i];
    if (c === '"') {
      const end = skipString(json, i);
      const isKey = /^\s*:/.test(json.slice(end, end + 8));
      if (isKey && depth === NODE_DEPTH && json.slice(i, end) === '"select_list"') {
        listDepth = NODE_DEPTH + 1;
      }
      i = end;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (c === "]" && depth === listDepth) {
        const empty = /\[\s*$/.test(json.slice(0, i));
        return `${json.slice(0, i)}${empty ? "" : ","}${item}${json.slice(i)}`;
      }
      depth--;
    }
    i++;
  }
  return null;
}

/** A column reference `qualifier.rowid AS alias` in the serializer's JSON form. */
export function rowIdColumnJson(qualifier: string, alias: string): string {
  return JSON.stringify({
    class: "COLUMN_REF",
    type: "COLUMN_REF",
    alias,
    column_names: [qualifier, "rowid"],
  });
}

/**
 * The registered tables any base-table reference names, including names a WITH clause
 * redefines (whose bodies may read the table of that name): the tables a perturbed copy
 * of the database must hold for the query to run on it.
 */
export function namedTables(statement: Node, registered: ReadonlyMap<string, string>): string[] {
  const found = new Set<string>();
  visit(statement, (node) => {
    const target = registeredTarget(node, registered);
    if (target) found.add(target);
  });
  return [...found];
}

/**
 * Whether a base-table reference names its schema or database (`memory.t`, `main.t` is
 * fine): such a reference bypasses the search path a re-run on perturbed copies switches.
 */
export function namesDatabase(statement: Node): boolean {
  let named = false;
  visit(statement, (node) => {
    if (node.type !== "BASE_TABLE") return;
    const schema = text(node.schema_name).toLowerCase();
    if (text(node.catalog_name) !== "" || !["", "main"].includes(schema)) named = true;
  });
  return named;
}

/** Whether the top query orders its rows (an ORDER BY that is not inside a subquery). */
export function ordersRows(statement: Node): boolean {
  const node = statement.node;
  if (!isNode(node) || !Array.isArray(node.modifiers)) return false;
  return node.modifiers.some(
    (m) => isNode(m) && m.type === "ORDER_MODIFIER" && Array.isArray(m.orders) && m.orders.length,
  );
}

/** A registered table the query reads, with its columns (as the table names them). */
export interface ReadTable {
  name: string;
  columns: readonly string[];
}

/** Registered tables directly in a FROM clause (through joins, not into subqueries). */
function fromTables(from: unknown, registered: ReadonlyMap<string, string>): Node[] {
  if (!isNode(from)) return [];
  if (from.type === "JOIN") {
    return [...fromTables(from.left, registered), ...fromTables(from.right, registered)];
  }
  return registeredTarget(from, registered) ? [from] : [];
}

/** Visits expressions without entering nested queries (they are visited as queries). */
function visitExpressions(value: unknown, onNode: (node: Node) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visitExpressions(item, onNode);
  } else if (isNode(value)) {
    if (value.type === "SELECT_NODE" || value.type === "SET_OPERATION_NODE") return;
    onNode(value);
    for (const child of Object.values(value)) visitExpressions(child, onNode);
  }
}

/**
 * Which columns of the tables a query reads it names, table by table, in each table's
 * column order: column references (qualified by a table's name or alias, or unqualified
 * and then every read table that has such a column), `*` and `t.*` in a SELECT over the
 * tables of its own FROM clause (less its EXCLUDE list), and USING or NATURAL join columns.
 * Names are compared as DuckDB does, ignoring case. A superset at worst: a name that a
 * subquery gives to something else still counts when a table has a column so named.
 */
export function columnsRead(
  statement: Node,
  tables: readonly ReadTable[],
  registered: ReadonlyMap<string, string>,
): Map<string, string[]> {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const lower = (s: string) => s.toLowerCase();
  const found = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set<string>()]));
  const add = (table: string, column: string) => {
    const known = byName.get(table)?.columns.find((c) => lower(c) === lower(column));
    if (known !== undefined) found.get(table)?.add(known);
  };
  const addAll = (table: string, except: string[] = []) => {
    const skip = new Set(except.map(lower));
    for (const column of byName.get(table)?.columns ?? []) {
      if (!skip.has(lower(column))) add(table, column);
    }
  };
  const hasColumn = (table: string, column: string) =>
    byName.get(table)?.columns.some((c) => lower(c) === lower(column)) ?? false;
  // What each table is called in the query: its alias, else its name.
  const aliases = new Map<string, string>();
  visit(statement, (node) => {
    const target = registeredTarget(node, registered);
    if (target) aliases.set(lower(text(node.alias) || text(node.table_name)), target);
  });
  const tableOf = (ref: Node) => registeredTarget(ref, registered) ?? "";
  visit(statement, (node) => {
    if (node.class === "COLUMN_REF" && Array.isArray(node.column_names)) {
      const names = node.column_names.map(text);
      const column = names.at(-1) ?? "";
      if (names.length === 1) {
        for (const table of tables) add(table.name, column);
        return;
      }
      const qualified = aliases.get(lower(names.at(-2) ?? ""));
      if (qualified && hasColumn(qualified, column)) add(qualified, column);
      // `s.field` on a struct column `s`.
      else for (const table of tables) add(table.name, names[0] ?? "");
      return;
    }
    if (node.type === "JOIN") {
      const left = fromTables(node.left, registered).map(tableOf);
      const right = fromTables(node.right, registered).map(tableOf);
      const using = Array.isArray(node.using_columns) ? node.using_columns.map(text) : [];
      for (const column of using) for (const table of [...left, ...right]) add(table, column);
      if (node.ref_type === "NATURAL") {
        for (const l of left) {
          for (const column of byName.get(l)?.columns ?? []) {
            if (right.some((r) => hasColumn(r, column))) {
              add(l, column);
              for (const r of right) add(r, column);
            }
          }
        }
      }
      return;
    }
    if (node.type !== "SELECT_NODE") return;
    const direct = fromTables(node.from_table, registered);
    visitExpressions(node.select_list, (expression) => {
      if (expression.class !== "STAR") return;
      const except = Array.isArray(expression.exclude_list)
        ? expression.exclude_list.map(text).filter(Boolean)
        : [];
      const relation = lower(text(expression.relation_name));
      for (const ref of direct) {
        const called = lower(text(ref.alias) || text(ref.table_name));
        if (relation === "" || relation === called) addAll(tableOf(ref), except);
      }
    });
  });
  return new Map(
    tables.map((t) => [t.name, t.columns.filter((c) => found.get(t.name)?.has(c) ?? false)]),
  );
}
