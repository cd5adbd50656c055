/** Flattens line breaks, shortens to `maxWidth` characters (ending in …) and escapes pipes. */
function cellText(value: string, maxWidth: number): string {
  let text = value.replace(/\r\n|\r|\n/g, "\\n");
  if (text.length > maxWidth) {
    const chars = Array.from(text);
    if (chars.length > maxWidth) text = `${chars.slice(0, Math.max(maxWidth - 1, 0)).join("")}…`;
  }
  return text.replaceAll("|", "\\|");
}

function tableLine(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

/**
 * A markdown pipe table of the first `maxRows` rows (default 20), cells cut to `maxWidth`
 * characters (default 40; column names are never cut). A row of `...` marks rows left
 * out; `rowNumbers` adds a `#` column with 0-based row positions, as pandas counts.
 */
export function renderTable(
  columns: string[],
  rows: string[][],
  opts: { maxRows?: number; maxWidth?: number; rowNumbers?: boolean } = {},
): string {
  const { maxRows = 20, maxWidth = 40, rowNumbers = false } = opts;
  if (columns.length === 0) return "(no columns)";
  const header = columns.map((name) => cellText(name, Number.POSITIVE_INFINITY));
  if (rowNumbers) header.unshift("#");
  const lines = [tableLine(header), tableLine(header.map(() => "---"))];
  const shown = rows.slice(0, Math.max(maxRows, 0));
  for (const [i, row] of shown.entries()) {
    const cells = columns.map((_, c) => cellText(row[c] ?? "", maxWidth));
    if (rowNumbers) cells.unshift(String(i));
    lines.push(tableLine(cells));
  }
  if (rows.length > shown.length) lines.push(tableLine(header.map(() => "...")));
  return lines.join("\n");
}
