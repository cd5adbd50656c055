import { z } from "zod";
import { DATETIME_DTYPE } from "./dtypes.js";
import { type RawSheet, readStructure, type TableBlock } from "./structure.js";
import { type ColumnReading, parseNumber, readColumn } from "./values.js";

/**
 * How files are read into tables: interpreted (titles, multi-row headers, totals, notes, units
 * and formatted numbers and dates read as an analyst reads them) unless `raw`; the header
 * height, leading rows to skip, the one sheet to load and the locale of the numbers and dates
 * override what the reader would decide.
 */
export const ReadingOptionsSchema = z.object({
  raw: z.boolean().optional(),
  headerRows: z.number().int().min(1).max(10).optional(),
  skipRows: z.number().int().min(0).max(1000).optional(),
  sheet: z.string().min(1).optional(),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z]{2})?$/)
    .optional(),
});
export type ReadingOptions = z.infer<typeof ReadingOptionsSchema>;

/** Languages whose numbers are written `1.234,5` (the rest: `1,234.5`). */
const DECIMAL_COMMA = new Set(
  "de fr es it nl pt ru pl cs sk sl hr sr bg ro hu tr el da sv nb nn no fi et lv lt uk be id vi".split(
    " ",
  ),
);
/** Regions that write dates month first. */
const MONTH_FIRST = new Set(["US", "PH", "CA", "FM", "MH", "PW"]);

/** The decimal mark and date order of a locale such as `de`, `en-US`, `fr_FR`. */
export function localeConventions(locale: string): { decimal: "." | ","; dayFirst: boolean } {
  const [language = "", region = ""] = locale.split(/[-_]/);
  const lang = language.toLowerCase();
  return {
    decimal: DECIMAL_COMMA.has(lang) ? "," : ".",
    dayFirst: !(lang === "en" && (region === "" || MONTH_FIRST.has(region.toUpperCase()))),
  };
}

/** Per column: what the table context tells about it. */
export interface ColumnFacts {
  path?: string[];
  unit?: string;
  reading?: string;
  formula?: boolean;
  /** `datetime64[ns]` for dates read from other text: the code's frame holds them as dates. */
  dtype?: string;
}

/** Rows of a table taken out of its data, with their text and places. */
export interface RowsAside {
  rows: string[][];
  text: string[][];
  places: number[];
  labels: string[];
}

/** One table read out of a sheet or a text file. */
export interface ReadTable {
  /** Column names before they are made unique: header paths joined with " / ". */
  header: string[];
  columns: ColumnFacts[];
  /** Cells as pandas should read them (numbers plain, dates ISO). */
  rows: string[][];
  /** The same cells' literal text. */
  text: string[][];
  /** The place (sheet row, file line, inline row) of each row. */
  places: number[];
  headerPlaces: number[];
  /** Indexes into the sheet's rows: the last header row, and each data row. */
  headerIndex: number;
  rowIndexes: number[];
  /** A workbook's column letter of each column. */
  letters?: string[];
  title: string[];
  totals: RowsAside;
  notes: { row: number; text: string }[];
  hidden: { rows: number[]; columns: string[] };
  skipped: number[];
  /** Rows inside the data that repeat the header, left out. */
  repeatedHeaders: number[];
  groupColumn?: string;
  /** Whether any of it differs from a literal reading (first row the header, every cell as is). */
  interpreted: boolean;
}

const PATH_SEPARATOR = " / ";

function columnOf(rows: readonly (readonly string[])[], c: number): string[] {
  return rows.map((row) => row[c] ?? "");
}

function readColumns(
  header: readonly string[],
  text: readonly (readonly string[])[],
  opts: ReadingOptions,
): ColumnReading[] {
  const conventions = opts.locale ? localeConventions(opts.locale) : undefined;
  return header.map((name, c) => readColumn(name, columnOf(text, c), conventions));
}

function transpose(columns: readonly (readonly string[])[], rows: number): string[][] {
  return Array.from({ length: rows }, (_, r) => columns.map((column) => column[r] ?? ""));
}

/**
 * The cells' values read column by column, and each column's facts with what its reading
 * found (a unit, how its text was read); `unitOf` gives a unit that wins over the values'.
 */
function readCells(
  header: readonly string[],
  text: readonly (readonly string[])[],
  facts: readonly ColumnFacts[],
  opts: ReadingOptions,
  unitOf: (column: number) => string | undefined = () => undefined,
): { rows: string[][]; columns: ColumnFacts[]; changed: boolean } {
  const readings = readColumns(header, text, opts);
  const columns = readings.map((reading, c) => {
    const fact: ColumnFacts = { ...facts[c] };
    const unit = unitOf(c) || reading.unit;
    if (unit) fact.unit = unit;
    if (reading.changed > 0 && reading.note) fact.reading = reading.note;
    if (reading.changed > 0 && (reading.kind === "date" || reading.kind === "datetime")) {
      fact.dtype = DATETIME_DTYPE;
    }
    return fact;
  });
  return {
    rows: transpose(
      readings.map((reading) => reading.values),
      text.length,
    ),
    columns,
    changed: readings.some((reading) => reading.changed > 0 || reading.unit !== undefined),
  };
}

/** A block of a RawSheet as a table: cells of its kept rows and columns, values read. */
function tableOf(sheet: RawSheet, block: TableBlock, opts: ReadingOptions): ReadTable {
  const textAt = (r: number) => block.columns.map((c) => sheet.cells[r]?.[c]?.text ?? "");
  const place = (r: number) => sheet.rowNumbers[r] ?? r + 1;
  let header = block.headerPaths.map((path) => path.join(PATH_SEPARATOR));
  // Labels filled down are values, not text: citations quote the empty cell as it is.
  const filled = new Map((block.fills ?? []).map((f) => [`${f.row}:${f.column}`, f.text]));
  const valueAt = (r: number) =>
    block.columns.map((c) => filled.get(`${r}:${c}`) ?? sheet.cells[r]?.[c]?.text ?? "");
  let dataText = block.rows.map(textAt);
  let dataValues = block.rows.map(valueAt);
  let totalsText = block.totals.map((total) => textAt(total.row));
  let totalsValues = block.totals.map((total) => valueAt(total.row));
  let facts: ColumnFacts[] = block.headerPaths.map((path) => (path.length > 1 ? { path } : {}));
  const formulas = new Set(block.formulaColumns);
  block.columns.forEach((c, i) => {
    if (formulas.has(c) && facts[i]) facts[i] = { ...facts[i], formula: true };
    const count = (block.fills ?? []).filter((f) => f.column === c).length;
    if (count > 0 && facts[i]) {
      facts[i] = {
        ...facts[i],
        reading: `filled down: ${count} empty cell${count === 1 ? "" : "s"} took the label above`,
      };
    }
  });
  let letters = sheet.letters ? block.columns.map((c) => sheet.letters?.[c] ?? "") : undefined;
  const groups = block.rowGroups;
  if (groups) {
    header = [groups.name, ...header];
    dataText = dataText.map((row, i) => [groups.values[i] ?? "", ...row]);
    dataValues = dataValues.map((row, i) => [groups.values[i] ?? "", ...row]);
    totalsText = totalsText.map((row) => ["", ...row]);
    totalsValues = totalsValues.map((row) => ["", ...row]);
    facts = [{}, ...facts];
    // The added column has no letter of its own: it cites the label column's.
    if (letters) letters = [letters[0] ?? "A", ...letters];
  }
  // A units row under the header ("'000", "$m") says more than the cells can.
  const offset = groups ? 1 : 0;
  const read = readCells(header, [...dataValues, ...totalsValues], facts, opts, (c) =>
    block.units?.[c - offset] ? block.units[c - offset] : undefined,
  );
  const hiddenColumns = block.hiddenColumns.map((c) => sheet.letters?.[c] ?? String(c + 1));
  const interpreted =
    block.title.length > 0 ||
    block.headerRows.length > 1 ||
    block.totals.length > 0 ||
    block.notes.length > 0 ||
    block.hiddenRows.length > 0 ||
    block.hiddenColumns.length > 0 ||
    groups !== undefined ||
    read.changed ||
    block.formulaColumns.length > 0 ||
    (block.repeatedHeaders?.length ?? 0) > 0 ||
    (block.fills?.length ?? 0) > 0 ||
    (block.units?.some(Boolean) ?? false) ||
    (block.skipped?.length ?? 0) > 0;
  const table: ReadTable = {
    header,
    columns: read.columns,
    rows: read.rows.slice(0, dataText.length),
    text: dataText,
    places: block.rows.map(place),
    headerPlaces: block.headerRows.map(place),
    headerIndex: block.headerRows.at(-1) ?? 0,
    rowIndexes: block.rows,
    title: block.title,
    totals: {
      rows: read.rows.slice(dataText.length),
      text: totalsText,
      places: block.totals.map((total) => place(total.row)),
      labels: block.totals.map((total) => total.label),
    },
    notes: block.notes.map((note) => ({ row: place(note.row), text: note.text })),
    hidden: { rows: block.hiddenRows.map(place), columns: hiddenColumns },
    skipped: (block.skipped ?? []).map(place),
    repeatedHeaders: (block.repeatedHeaders ?? []).map(place),
    interpreted,
  };
  if (letters) table.letters = letters;
  if (groups) table.groupColumn = groups.name;
  return table;
}

/** A grid whose header and rows are known (JSON records): only its values are read. */
export function readValues(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  opts: ReadingOptions = {},
): ReadTable {
  const read = readCells(
    header,
    rows,
    header.map(() => ({})),
    opts,
  );
  return {
    header: [...header],
    columns: read.columns,
    rows: read.rows,
    text: rows.map((row) => [...row]),
    places: rows.map((_, i) => i + 1),
    headerPlaces: [],
    headerIndex: 0,
    rowIndexes: rows.map((_, i) => i + 1),
    title: [],
    totals: { rows: [], text: [], places: [], labels: [] },
    notes: [],
    hidden: { rows: [], columns: [] },
    skipped: [],
    repeatedHeaders: [],
    interpreted: read.changed,
  };
}

/** The tables of a sheet or text file, read as its structure and values say. */
export function readSheet(sheet: RawSheet, opts: ReadingOptions = {}): ReadTable[] {
  const overrides: Parameters<typeof readStructure>[1] = {};
  if (opts.headerRows !== undefined) overrides.headerRows = opts.headerRows;
  if (opts.skipRows !== undefined) overrides.skipRows = opts.skipRows;
  const decimal = opts.locale ? localeConventions(opts.locale).decimal : sheetDecimal(sheet);
  if (decimal === ",") {
    overrides.numberOf = (text) => parseNumber(text, ",");
    overrides.decimal = ",";
  }
  return readStructure(sheet, overrides).map((block) => tableOf(sheet, block, opts));
}

/** Cells a sheet's decimal mark is judged by, at most. */
const DECIMAL_SAMPLE = 4000;

/**
 * A sheet's decimal mark for the sums that find its totals: a comma when more of its numbers
 * can only be read with one ("2128,1", "1.234,5") than with a point ("2128.1", "1,234.5").
 */
function sheetDecimal(sheet: RawSheet): "." | "," {
  let comma = 0;
  let point = 0;
  let seen = 0;
  for (const row of sheet.cells) {
    for (const cell of row) {
      if (cell.kind === "empty") continue;
      if (++seen > DECIMAL_SAMPLE) return comma > point ? "," : ".";
      const text = cell.text.trim();
      if (
        /^[-+\u2212]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+$/.test(text) &&
        !/^\d{1,3},\d{3}$/.test(text)
      )
        comma++;
      else if (
        /^[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)\.\d+$/.test(text) &&
        !/^\d{1,3}\.\d{3}$/.test(text)
      )
        point++;
    }
  }
  return comma > point ? "," : ".";
}
