import type { Grid, GridChild } from "./grid.js";

/**
 * JSON records flattened into a table: nested objects into dotted columns (`address.city`),
 * lists of scalars into one column of JSON list text (named in `lists`), lists of records into a
 * child table per column, whose first column `_parent_row` is the 0-based row of the parent
 * record; the parent's column keeps how many records each row's list holds. Bounded: objects
 * nested deeper than MAX_JSON_DEPTH, objects with more keys than MAX_OBJECT_KEYS (maps, not
 * records) and the widest objects past MAX_FLAT_COLUMNS stay JSON text, with a warning.
 */

/** Levels of nesting flattened (a record's own fields are level 1); deeper values stay JSON text. */
export const MAX_JSON_DEPTH = 8;
/** An object with more distinct keys than this, over all records, stays JSON text. */
export const MAX_OBJECT_KEYS = 200;
/** Columns a table's nested objects may add at most: past it, the widest stay JSON text. */
export const MAX_FLAT_COLUMNS = 1000;
/** The first column of a child table: the 0-based row of its parent record. */
export const PARENT_ROW = "_parent_row";

type JsonRecord = Record<string, unknown>;
type Folded = "depth" | "keys" | "columns";

/** What the records hold at one path, over all of them. */
interface Field {
  label: string;
  path: string[];
  depth: number;
  fields: Map<string, Field>;
  /** Objects here stay JSON text, and why. */
  folded?: Folded;
  /** Text, numbers, booleans, or objects kept as text. */
  scalars: boolean;
  nulls: boolean;
  empties: boolean;
  arrays: boolean;
  /** Some list here holds a record; a list; a scalar or null. */
  recordItems: boolean;
  listItems: boolean;
  scalarItems: boolean;
  /** The column of the values that are not flattened: -1 when there is none. */
  column: number;
  kind: "text" | "list" | "child";
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function newField(path: string[], depth: number): Field {
  return {
    label: path.join("."),
    path,
    depth,
    fields: new Map(),
    scalars: false,
    nulls: false,
    empties: false,
    arrays: false,
    recordItems: false,
    listItems: false,
    scalarItems: false,
    column: -1,
    kind: "text",
  };
}

function fold(field: Field, why: Folded): void {
  field.folded = why;
  field.fields.clear();
  field.scalars = true;
}

function observe(field: Field, value: unknown): void {
  if (value === null || value === undefined) {
    field.nulls = true;
  } else if (Array.isArray(value)) {
    field.arrays = true;
    for (const item of value) {
      if (isRecord(item)) field.recordItems = true;
      else if (Array.isArray(item)) field.listItems = true;
      else field.scalarItems = true;
    }
  } else if (!isRecord(value)) {
    field.scalars = true;
  } else if (field.folded) {
    field.scalars = true;
  } else if (field.depth >= MAX_JSON_DEPTH) {
    fold(field, "depth");
  } else {
    const keys = Object.keys(value);
    if (keys.length === 0) field.empties = true;
    for (const key of keys) {
      let inner = field.fields.get(key);
      if (!inner) {
        if (field.fields.size >= MAX_OBJECT_KEYS) {
          fold(field, "keys");
          return;
        }
        inner = newField([...field.path, key], field.depth + 1);
        field.fields.set(key, inner);
      }
      observe(inner, value[key]);
    }
  }
}

/** Whether a field has a column of its own: anything but records it flattens (and nulls beside them). */
function ownColumn(field: Field): boolean {
  return (
    field.scalars || field.arrays || (field.fields.size === 0 && (field.nulls || field.empties))
  );
}

function columnCount(field: Field): number {
  let n = ownColumn(field) ? 1 : 0;
  for (const inner of field.fields.values()) n += columnCount(inner);
  return n;
}

/** Folds the widest objects under the top level until the columns fit in MAX_FLAT_COLUMNS. */
function boundColumns(top: readonly Field[]): void {
  const counts = top.map((field) => ({ field, n: columnCount(field) }));
  let total = counts.reduce((sum, c) => sum + c.n, 0);
  for (const { field, n } of [...counts].sort((a, b) => b.n - a.n)) {
    if (total <= MAX_FLAT_COLUMNS) return;
    if (field.fields.size === 0) continue;
    fold(field, "columns");
    total -= n - 1;
  }
}

function assignColumns(field: Field, header: string[], lists: string[], columns: Field[]): void {
  if (ownColumn(field)) {
    field.column = header.length;
    header.push(field.label);
    columns.push(field);
    if (field.arrays && !field.scalars) {
      // Lists of lists stay text: they may nest deeper than a reader's stack.
      if (!field.recordItems && !field.listItems) {
        field.kind = "list";
        lists.push(field.label);
      } else if (!field.listItems && !field.scalarItems && field.depth + 2 <= MAX_JSON_DEPTH) {
        field.kind = "child";
      }
    }
  }
  for (const inner of field.fields.values()) assignColumns(inner, header, lists, columns);
}

/** Records of a child table as they are gathered: each with its parent's row. */
interface Gathered {
  parents: number[];
  records: JsonRecord[];
}

function fill(
  field: Field,
  value: unknown,
  row: string[],
  r: number,
  gathered: Map<Field, Gathered>,
) {
  if (value === null || value === undefined) return;
  if (isRecord(value) && !field.folded && field.fields.size > 0) {
    for (const key of Object.keys(value)) {
      const inner = field.fields.get(key);
      if (inner) fill(inner, value[key], row, r, gathered);
    }
    return;
  }
  if (field.column < 0) return;
  if (field.kind === "child" && Array.isArray(value)) {
    row[field.column] = String(value.length);
    let child = gathered.get(field);
    if (!child) {
      child = { parents: [], records: [] };
      gathered.set(field, child);
    }
    for (const item of value) {
      child.parents.push(r);
      child.records.push(item as JsonRecord);
    }
    return;
  }
  row[field.column] = cellJson(value);
}

function warningsOf(fields: Iterable<Field>): string[] {
  const byWhy = new Map<Folded, string[]>();
  const visit = (field: Field) => {
    if (field.folded) byWhy.set(field.folded, [...(byWhy.get(field.folded) ?? []), field.label]);
    for (const inner of field.fields.values()) visit(inner);
  };
  for (const field of fields) visit(field);
  const names = (labels: string[]) =>
    labels
      .slice(0, 5)
      .map((label) => JSON.stringify(label))
      .join(", ") + (labels.length > 5 ? ` and ${labels.length - 5} more` : "");
  const reasons: Record<Folded, string> = {
    depth: `nested deeper than ${MAX_JSON_DEPTH} levels`,
    keys: `objects with more than ${MAX_OBJECT_KEYS} keys`,
    columns: `more than ${MAX_FLAT_COLUMNS} columns when flattened`,
  };
  return [...byWhy].map(([why, labels]) => `kept as JSON text (${reasons[why]}): ${names(labels)}`);
}

/** A name not among `taken`: `_parent_row`, else `_parent_row_2`, ... */
function freeName(base: string, taken: readonly string[]): string {
  const used = new Set(taken);
  let name = base;
  for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
  return name;
}

/**
 * Records flattened into a grid; `depth` is the level their own fields are at (1 for the file's
 * records). Lists of records become `children`, flattened the same way, named `prefix` + column.
 */
export function flattenRecords(records: readonly JsonRecord[], depth = 1, prefix = ""): Grid {
  const root = newField([], depth - 1);
  for (const record of records) {
    for (const key of Object.keys(record)) {
      let field = root.fields.get(key);
      if (!field) {
        field = newField([key], depth);
        root.fields.set(key, field);
      }
      observe(field, record[key]);
    }
  }
  const top = [...root.fields.values()];
  boundColumns(top);
  const header: string[] = [];
  const lists: string[] = [];
  const columns: Field[] = [];
  for (const field of top) assignColumns(field, header, lists, columns);
  const gathered = new Map<Field, Gathered>();
  const rows = records.map((record, r) => {
    const row = new Array<string>(header.length).fill("");
    for (const key of Object.keys(record)) {
      const field = root.fields.get(key);
      if (field) fill(field, record[key], row, r, gathered);
    }
    return row;
  });
  const grid: Grid = { header, rows };
  if (lists.length > 0) grid.lists = lists;
  const children: GridChild[] = [];
  for (const field of columns) {
    if (field.kind !== "child") continue;
    const { parents, records: items } = gathered.get(field) ?? { parents: [], records: [] };
    const name = prefix + field.label;
    const inner = flattenRecords(items, field.depth + 2, `${name}.`);
    const parent = freeName(PARENT_ROW, inner.header);
    const childGrid: Grid = {
      ...inner,
      header: [parent, ...inner.header],
      rows: inner.rows.map((row, i) => [String(parents[i]), ...row]),
    };
    children.push({
      name,
      grid: childGrid,
      parentColumn: field.label,
      path: field.path,
    });
  }
  if (children.length > 0) grid.children = children;
  const warnings = warningsOf(top);
  for (const child of children) {
    for (const warning of child.grid.warnings ?? []) {
      warnings.push(`in the lists of records in ${JSON.stringify(child.name)}: ${warning}`);
    }
  }
  if (warnings.length > 0) grid.warnings = warnings;
  return grid;
}

/** A JSON value's text as pandas should see it in a cell: scalars as is, the rest as JSON. */
export function cellJson(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  return jsonText(value);
}

/** JSON.stringify, but values nested deeper than the stack allows still print. */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  return stackFreeJson(value);
}

interface Frame {
  items: unknown[];
  keys?: string[];
  next: number;
}

/** JSON text of parsed JSON without recursion, as JSON.stringify writes it. */
function stackFreeJson(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  let value = root;
  for (;;) {
    if (Array.isArray(value)) {
      out.push("[");
      stack.push({ items: value, next: 0 });
    } else if (isRecord(value)) {
      const record = value;
      const keys = Object.keys(record);
      out.push("{");
      stack.push({ items: keys.map((key) => record[key]), keys, next: 0 });
    } else out.push(JSON.stringify(value) ?? "null");
    for (;;) {
      const top = stack.at(-1);
      if (!top) return out.join("");
      if (top.next < top.items.length) {
        if (top.next > 0) out.push(",");
        if (top.keys) out.push(`${JSON.stringify(top.keys[top.next])}:`);
        value = top.items[top.next++];
        break;
      }
      out.push(top.keys ? "}" : "]");
      stack.pop();
    }
  }
}
