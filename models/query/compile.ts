import { type Condition, conditionText, type Measure, type Query } from "./language.js";

/*
 * A query as pandas, written the way the coder's rules ask: the rows a measure keeps in a
 * DataFrame of their own (shown as evidence), numbers read with `pd.to_numeric`, text compared
 * without regard to case or surrounding spaces, the values printed with labels and the result
 * assigned to `result`.
 */

const py = (text: string): string => JSON.stringify(text);

function columnOf(frame: string, column: string): string {
  return `${frame}[${py(column)}]`;
}

function numbersOf(frame: string, column: string): string {
  return `pd.to_numeric(${columnOf(frame, column)}, errors="coerce")`;
}

function test(frame: string, c: Condition): string {
  if (typeof c.value === "number") {
    const op = c.test === "=" ? "==" : c.test;
    return `(${numbersOf(frame, c.column)} ${op} ${c.value})`;
  }
  const text = `${columnOf(frame, c.column)}.astype(str).str.strip().str.casefold()`;
  const value = `${py(c.value.trim())}.casefold()`;
  switch (c.test) {
    case "is":
      return `(${text} == ${value})`;
    case "is not":
      return `(${text} != ${value})`;
    default:
      return `${text}.str.contains(${value}, regex=False)`;
  }
}

function describe(m: Measure): string {
  switch (m.kind) {
    case "aggregate":
      return `${m.aggregate} of ${m.column}`;
    case "count":
      return "rows";
    case "value":
      return m.column;
    case "rank":
      return `${m.order} ${m.column} by ${m.aggregate ? `${m.aggregate} of ` : ""}${m.by}`;
  }
}

/** Lines that put the measure's value into `name`, from the DataFrame `frame`. */
function measureLines(m: Measure, name: string, suffix: string, frame: string): string[] {
  const rows = `rows${suffix}`;
  const lines =
    m.where.length > 0
      ? [`${rows} = ${frame}[${m.where.map((c) => test(frame, c)).join(" & ")}]`]
      : [`${rows} = ${frame}`];
  switch (m.kind) {
    case "aggregate":
      lines.push(`${name} = ${numbersOf(rows, m.column)}.${m.aggregate}()`);
      break;
    case "count":
      lines.push(`${name} = len(${rows})`);
      break;
    case "value":
      lines.push(
        `values${suffix} = ${columnOf(rows, m.column)}.tolist()`,
        `${name} = values${suffix}[0] if len(values${suffix}) == 1 else values${suffix}`,
      );
      break;
    case "rank": {
      const ascending = m.order === "bottom" ? "True" : "False";
      const ranked = `ranked${suffix}`;
      if (m.aggregate) {
        lines.push(
          `${ranked} = ${numbersOf(rows, m.by)}.groupby(${columnOf(rows, m.column)}).${m.aggregate}().sort_values(ascending=${ascending})`,
        );
        lines.push(
          m.take === 1
            ? `${name} = ${ranked}.index[0]`
            : `${name} = list(${ranked}.index[:${m.take}])`,
        );
      } else {
        lines.push(
          `${ranked} = ${rows}.loc[${numbersOf(rows, m.by)}.sort_values(ascending=${ascending}).index]`,
        );
        lines.push(
          m.take === 1
            ? `${name} = ${columnOf(ranked, m.column)}.iloc[0]`
            : `${name} = ${columnOf(ranked, m.column)}.head(${m.take}).tolist()`,
        );
      }
      break;
    }
  }
  lines.push(`print(${py(`${describe(m)}:`)}, ${name})`);
  return lines;
}

/** The pandas program a query stands for, over the DataFrame named `frame`. */
export function compileQuery(query: Query, frame = "df"): string {
  if (query.kind === "measure") return measureLines(query.measure, "result", "", frame).join("\n");
  const scale = query.percent ? " * 100" : "";
  return [
    ...measureLines(query.a, "a", "_a", frame),
    ...measureLines(query.b, "b", "_b", frame),
    `result = a ${query.op} b${scale}`,
    'print("result:", result)',
  ].join("\n");
}

function measureWords(m: Measure): string[] {
  const keep =
    m.where.length > 0 ? [`Keep the rows where ${m.where.map(conditionText).join(" and ")}.`] : [];
  switch (m.kind) {
    case "aggregate":
      return [...keep, `Take the ${m.aggregate} of ${m.column}.`];
    case "count":
      return [...keep, "Count the rows."];
    case "value":
      return [...keep, `List ${m.column}.`];
    case "rank": {
      const by = m.aggregate ? `the ${m.aggregate} of ${m.by} per ${m.column}` : m.by;
      const which = m.order === "top" ? "largest" : "smallest";
      return [
        ...keep,
        `Take the ${m.take === 1 ? "" : `${m.take} `}${m.column} with the ${which} ${by}.`,
      ];
    }
  }
}

/** The query's steps in words, as a plan reads. */
export function describeQuery(query: Query): string[] {
  if (query.kind === "measure") return measureWords(query.measure);
  const scale = query.percent ? ", times 100" : "";
  return [
    ...measureWords(query.a).map((step) => `a: ${step}`),
    ...measureWords(query.b).map((step) => `b: ${step}`),
    `Compute a ${query.op} b${scale}.`,
  ];
}
