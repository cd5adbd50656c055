import { describe, expect, it } from "vitest";
import { grammarFor } from "../../models/local-grammar.js";
import { sample } from "../../models/local-grammar-dsl.js";
import { compileQuery, describeQuery } from "../../models/query/compile.js";
import { parseQuery, QueryParseError, queryGrammar } from "../../models/query/language.js";
import { type QueryTable, queryTableIn, queryTableOf } from "../../models/query/table.js";
import { queryAnswer } from "../../nodes/answerer.js";
import { queryAnswerOf, queryAttempt, queryPrompt } from "../../nodes/coder.js";

const COLUMNS = [
  { name: "rank", dtype: "int64" },
  { name: "nation", dtype: "object" },
  { name: "gold", dtype: "int64" },
  { name: "points against", dtype: "float64" },
  { name: "points", dtype: "float64" },
];
const ROWS = [
  ["1", "United States", "39", "3.5", "10"],
  ["2", "China", "38", "1", "12"],
  ["3", "Great Britain", "22", "2", "9"],
];
const TABLE = queryTableOf(COLUMNS, ROWS);

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe("the query language", () => {
  it("lists text values and numbers by dtype, and reads its own listing back", () => {
    expect(TABLE.columns.map((c) => c.kind)).toEqual([
      "number",
      "text",
      "number",
      "number",
      "number",
    ]);
    expect(TABLE.columns[1]?.values).toEqual(["United States", "China", "Great Britain"]);
    const prompt = queryPrompt({ table: TABLE, question: "q", errorHistory: "" });
    expect(queryTableIn(prompt)).toEqual(TABLE);
    expect(queryTableIn("no listing here")).toBeUndefined();
  });

  it("finds the conditions a question names: a whole text cell, a number beside its column", () => {
    const named = queryTableOf(
      COLUMNS,
      ROWS,
      "How many points did great britain score with 22 gold?",
    );
    expect(named.named).toEqual([
      { column: "nation", test: "is", value: "Great Britain" },
      { column: "gold", test: "=", value: 22 },
    ]);
    // 22 is a number of `gold` only, and the question does not name `rank`.
    expect(queryTableOf(COLUMNS, ROWS, "Which nation ranked 2?").named).toBeUndefined();
  });

  it("compiles each measure to pandas that keeps its rows and prints labelled values", () => {
    const code = (q: string) => compileQuery(parseQuery(`\`\`\`query\n${q}\n\`\`\``, TABLE));
    expect(code('result = sum gold where nation is "China"')).toBe(
      [
        'rows = df[(df["nation"].astype(str).str.strip().str.casefold() == "China".casefold())]',
        'result = pd.to_numeric(rows["gold"], errors="coerce").sum()',
        'print("sum of gold:", result)',
      ].join("\n"),
    );
    expect(code("result = count rows where gold >= 30 and points != 9")).toContain(
      'rows = df[(pd.to_numeric(df["gold"], errors="coerce") >= 30) & (pd.to_numeric(df["points"], errors="coerce") != 9)]',
    );
    expect(code("result = top 2 nation by points")).toContain(
      'result = ranked["nation"].head(2).tolist()',
    );
    expect(code("result = bottom nation by sum gold")).toContain(
      '.groupby(rows["nation"]).sum().sort_values(ascending=True)',
    );
    const twoStep = code(
      'a = value gold where nation is "China"\nb = value gold where nation is "Great Britain"\nresult = a - b',
    );
    expect(twoStep).toContain("rows_a = df[");
    expect(twoStep).toContain("rows_b = df[");
    expect(twoStep).toMatch(/result = a - b\nprint\("result:", result\)$/);
  });

  it("reads the longest column name that fits, and refuses what is not a query of this table", () => {
    const q = parseQuery("result = sum points against", TABLE);
    expect(q).toMatchObject({ measure: { kind: "aggregate", column: "points against" } });
    expect(parseQuery("result = sum points", TABLE)).toMatchObject({
      measure: { column: "points" },
    });
    for (const bad of [
      "result = sum silver",
      "result = sum nation",
      "result = 203",
      'result = count rows where gold is "x"',
      "result = sum gold and more",
      "print(df)",
    ]) {
      expect(() => parseQuery(bad, TABLE), bad).toThrow(QueryParseError);
    }
  });

  it("describes a query as plan steps", () => {
    const query = parseQuery('result = count rows where nation contains "united"', TABLE);
    expect(describeQuery(query)).toEqual([
      'Keep the rows where nation contains "united".',
      "Count the rows.",
    ]);
  });

  it("parses and compiles every string its grammar allows", () => {
    const tables: QueryTable[] = [
      TABLE,
      { ...TABLE, answer: "number" },
      { ...TABLE, answer: "name", named: [{ column: "nation", test: "is", value: "China" }] },
    ];
    for (const table of tables) {
      const random = seeded(7);
      for (let i = 0; i < 150; i++) {
        const text = sample(queryGrammar(table), random);
        expect(() => compileQuery(parseQuery(text, table)), text).not.toThrow();
      }
    }
  });

  it("keeps a query to the kind of answer asked and to the rows the question names", () => {
    const random = seeded(11);
    const name: QueryTable = {
      ...TABLE,
      answer: "name",
      named: [{ column: "gold", test: "=", value: 22 }],
    };
    for (let i = 0; i < 100; i++) {
      const query = parseQuery(sample(queryGrammar(name), random), name);
      expect(query.kind).toBe("measure");
      if (query.kind !== "measure") continue;
      expect(["value", "rank"]).toContain(query.measure.kind);
      if (query.measure.kind !== "aggregate" && query.measure.kind !== "count") {
        expect(query.measure.column).toBe("nation");
      }
      if (query.measure.kind === "rank") expect(query.measure.take).toBe(1);
      expect(query.measure.where[0]?.column).toBe("gold");
    }
    const number: QueryTable = { ...TABLE, answer: "number" };
    for (let i = 0; i < 100; i++) {
      const query = parseQuery(sample(queryGrammar(number), random), number);
      const measures = query.kind === "measure" ? [query.measure] : [query.a, query.b];
      for (const m of measures) {
        expect(m.kind).not.toBe("rank");
        if (m.kind === "value") expect(m.column).not.toBe("nation");
      }
    }
    expect(queryAnswerOf("How many gold medals in total?")).toEqual({ answer: "number" });
    expect(queryAnswerOf("Which nation won 22 gold medals?")).toEqual({ answer: "name" });
  });

  it("gives the local model the table's grammar from the query coder's prompt", () => {
    const prompt = queryPrompt({
      table: { ...TABLE, answer: "number" },
      question: "How many gold medals in total?",
      errorHistory: "",
    });
    const shape = grammarFor("query", prompt);
    expect(shape?.role).toBe("query");
    expect(shape?.gbnf).toContain('"points against"');
    expect(shape?.gbnf).not.toContain('"top"');
    expect(grammarFor("query", "Question: no listing")).toBeUndefined();
  });

  it("makes an attempt of a reply: compiled code and plan, or the parse error", () => {
    const good = queryAttempt("a1", "```query\nresult = sum gold\n```", TABLE);
    expect(good.attempt).toMatchObject({ id: "a1", query: "result = sum gold", parseError: null });
    expect(good.plan).toEqual(["Take the sum of gold."]);
    const bad = queryAttempt("a2", "```query\nresult = sum silver\n```", TABLE);
    expect(bad.attempt.code).toBe("");
    expect(bad.attempt.parseError).toMatch(
      /the query reply has no query of this table \(expected a number column/,
    );
    expect(bad.plan).toBeUndefined();
  });
});

describe("the answer of a query", () => {
  const ran = (values: unknown[], kind = "scalar", query: string | null = "result = x") =>
    ({
      id: "a2",
      code: "",
      raw: "",
      parseError: null,
      ...(query ? { query } : {}),
      result: { ok: true, result: { kind, values } },
    }) as unknown as Parameters<typeof queryAnswer>[0];

  it("is the query's result itself, floats to two decimals, lists joined, cited by the result's id", () => {
    expect(queryAnswer(ran([203]))).toBe("Final Answer: 203\nEvidence: a2:result");
    expect(queryAnswer(ran([37.63666]))).toBe("Final Answer: 37.64\nEvidence: a2:result");
    expect(queryAnswer(ran(["Real Betis", "Real Madrid B"], "list"))).toMatch(
      /^Final Answer: Real Betis, Real Madrid B\n/,
    );
  });

  it("is left to the answerer for code a model wrote, tables, nothing, or missing values", () => {
    expect(queryAnswer(ran([203], "scalar", null))).toBeUndefined();
    expect(queryAnswer(ran([1, 2], "frame"))).toBeUndefined();
    expect(queryAnswer(ran([], "list"))).toBeUndefined();
    expect(queryAnswer(ran([null]))).toBeUndefined();
  });
});
