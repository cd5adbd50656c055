import { createContext, useContext, useEffect, useState } from "react";
import {
  type AnswerView as AnswerProps,
  AnswerViewSchema,
  type GridRow,
  type TableView as TableProps,
  TableViewSchema,
} from "../views/schemas.js";
import "./views.css";

/*
 * The generative UI components the graphs push (views/push.ts), by the names of langgraph.json's
 * `ui`: Studio, Agent Chat UI and the page of `tableminds ui` load them from there. Every cell is
 * text: React escapes it, and nothing here ever sets HTML.
 */

/**
 * How an image of the API (a chart) becomes a `src`: as it is, unless the page knows better (a
 * server with API keys: the page fetches it with the key).
 */
export const ImageSource = createContext<(src: string) => Promise<string>>(async (src) => src);

function Chart({ title, src }: { title: string; src: string }) {
  const load = useContext(ImageSource);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    load(src).then(
      (resolved) => live && setUrl(resolved),
      () => live && setUrl(null),
    );
    return () => {
      live = false;
    };
  }, [load, src]);
  return (
    <figure className="tm-chart">
      {url ? <img src={url} alt={title || "chart"} /> : <span>chart {title}: loading</span>}
      {title ? <figcaption>{title}</figcaption> : null}
    </figure>
  );
}

const ROW_WORDS: Record<GridRow["kind"], string> = {
  header: "header",
  data: "",
  total: "total",
  note: "note",
  hidden: "hidden",
  title: "title",
  skipped: "skipped",
};

function litKey(row: number, column: string): string {
  return JSON.stringify([row, column]);
}

/** The grid: the table in its user's coordinates, rows left out of the data marked, cells lit. */
export function Grid({ view }: { view: TableProps }) {
  const lit = new Set(view.highlight.map((c) => litKey(c.row, c.column)));
  const litColumns = new Set(view.highlightColumns);
  const letters = view.columns.some((c) => c.letter);
  const width = view.columns.length;
  return (
    <div className="tm-grid-wrap">
      <table
        className="tm-grid"
        aria-label={`${view.table}: ${view.source}`}
        data-table={view.table}
      >
        <thead>
          <tr>
            <th scope="col" className="tm-place">
              {view.unit}
            </th>
            {view.columns.map((c) => (
              <th
                scope="col"
                key={c.name}
                className={litColumns.has(c.name) ? "tm-lit-column" : undefined}
                title={[c.name, c.dtype, c.unit].filter(Boolean).join(" · ")}
              >
                {letters ? (c.letter ?? "") : c.name}
                {!letters && c.unit ? <span className="tm-unit"> ({c.unit})</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {view.grid.map((row, i) => {
            const key = `${row.kind}:${row.place ?? `t${i}`}:${i}`;
            const word = ROW_WORDS[row.kind];
            const place = (
              <th scope="row" className="tm-place">
                {row.place ?? ""}
                {word ? <span className="tm-kind">{word}</span> : null}
              </th>
            );
            if (row.kind === "data" || row.kind === "total" || row.kind === "header") {
              const cells = row.cells.length > 0 ? row.cells : Array(width).fill("");
              return (
                <tr key={key} className={`tm-row-${row.kind}`} data-kind={row.kind}>
                  {place}
                  {cells.map((cell, j) => {
                    const column = view.columns[j]?.name ?? "";
                    const on =
                      row.row !== null &&
                      (lit.has(litKey(row.row, column)) || litColumns.has(column));
                    return (
                      <td
                        key={column}
                        data-row={row.row ?? undefined}
                        data-column={column}
                        data-lit={on ? "true" : undefined}
                        className={on ? "tm-lit" : undefined}
                      >
                        {j === 0 && row.kind === "total" && !cell ? row.text : cell}
                      </td>
                    );
                  })}
                </tr>
              );
            }
            return (
              <tr key={key} className={`tm-row-${row.kind}`} data-kind={row.kind}>
                {place}
                <td colSpan={Math.max(width, 1)}>{row.text}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {view.more > 0 ? <p className="tm-more">and {view.more} more rows</p> : null}
      {view.withheld ? <p className="tm-more">{view.withheld}</p> : null}
    </div>
  );
}

/** `table`: the table as read, with `inspect`'s words beside it. */
export function TableView(props: Record<string, unknown>) {
  const parsed = TableViewSchema.safeParse(props);
  if (!parsed.success) return <p className="tm-error">This table view could not be read.</p>;
  const view = parsed.data;
  return (
    <section className="tm-view tm-table" aria-label={`table ${view.table}`}>
      <h3>
        {view.table} <span className="tm-source">{view.source}</span>{" "}
        <span className="tm-size">
          {view.rows} rows × {view.columns.length} columns
        </span>
      </h3>
      {view.words.length > 0 ? (
        <ul className="tm-words">
          {view.words.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
      <Grid view={view} />
    </section>
  );
}

function Code({ code }: { code: NonNullable<AnswerProps["code"]> }) {
  const [from, to] = code.lines ?? [0, -1];
  return (
    <pre className="tm-code" data-attempt={code.attempt}>
      {code.text.split("\n").map((line, i) => {
        const n = i + 1;
        const on = n >= from && n <= to;
        return (
          <span
            key={`line-${n}`}
            className={on ? "tm-line tm-result-line" : "tm-line"}
            data-result-line={on ? "true" : undefined}
          >
            <span className="tm-line-number">{n}</span>
            {line}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}

const STATUS_WORDS: Record<AnswerProps["status"], string> = {
  passed: "Checked: passed",
  "not sure": "Not sure",
  unchecked: "Unchecked",
};

/** `answer`: the value, its verdict and the evidence it rests on. */
export function AnswerView(props: Record<string, unknown>) {
  const parsed = AnswerViewSchema.safeParse(props);
  if (!parsed.success) return <p className="tm-error">This answer view could not be read.</p>;
  const view = parsed.data;
  return (
    <section className="tm-view tm-answer" aria-label="answer" data-status={view.status}>
      <p className="tm-question">{view.question}</p>
      <p className="tm-value">
        <output>{view.answer}</output>
        <span className={`tm-status tm-status-${view.status.replace(" ", "-")}`}>
          {STATUS_WORDS[view.status]}
        </span>
        {view.confidence !== null ? (
          <span className="tm-confidence">confidence {Math.round(view.confidence * 100)}%</span>
        ) : null}
      </p>
      {view.alignment ? <p className="tm-alignment">{view.alignment}</p> : null}
      {view.reasons.length > 0 ? (
        <ul className="tm-reasons" aria-label="reasons">
          {view.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      ) : null}
      {view.cells.length > 0 ? (
        <p className="tm-cells">
          From <span>{view.cells.join("; ")}</span>
        </p>
      ) : null}
      {view.sources.map((source) => (
        <div key={source.table} className="tm-source-grid">
          <h4>
            {source.table} <span className="tm-source">{source.source}</span>
          </h4>
          <Grid view={source} />
        </div>
      ))}
      {view.charts.map((c) => (
        <Chart key={c.src} title={c.title} src={c.src} />
      ))}
      {view.plan.length > 0 ? (
        <details className="tm-plan">
          <summary>Plan ({view.plan.length} steps)</summary>
          <ol>
            {view.plan.map((step) => (
              <li key={step}>{step}</li>
            ))}
          </ol>
        </details>
      ) : null}
      {view.code ? (
        <details className="tm-evidence" open>
          <summary>Code {view.code.attempt}</summary>
          <Code code={view.code} />
        </details>
      ) : null}
      {view.output ? (
        <details className="tm-evidence">
          <summary>Printed output</summary>
          <pre className="tm-output">{view.output}</pre>
        </details>
      ) : null}
      {view.sql.map((q) => (
        <details key={q.query} className="tm-evidence" open>
          <summary>SQL over {q.table}</summary>
          <pre className="tm-code">{q.query}</pre>
          {q.places ? <p>returned {q.places}</p> : null}
        </details>
      ))}
    </section>
  );
}

export default { table: TableView, answer: AnswerView };
