import { describe, expect, it } from "vitest";
import { headerUnit, parseNumber, readColumn } from "../../tables/values.js";

/** Reads a column under a plain header and returns it. */
const read = (values: string[], prefer?: Parameters<typeof readColumn>[2]) =>
  readColumn("x", values, prefer);

describe("readColumn: numbers", () => {
  it("reads currency amounts with thousands separators and negatives in parentheses", () => {
    const reading = read(["$1,250,400", "$(1,234)", "-", "$0", " $12.50 "]);
    expect(reading).toMatchObject({
      kind: "currency",
      values: ["1250400", "-1234", "", "0", "12.50"],
      unit: "USD",
      decimal: ".",
      changed: 5,
    });
    expect(reading.note).toContain("currency USD");
    expect(reading.note).toContain("negatives in parentheses");
    expect(reading.note).toContain('"$1,250,400" -> 1250400');
    expect(reading.note).toContain('"-" (often nil, exactly zero) read as missing');
  });

  it("reads currency symbols and codes before or after, and signs where accountants put them", () => {
    expect(read(["€1.234,56", "1.234,56 €", "-500,00 €", "EUR 7"]).values).toEqual([
      "1234.56",
      "1234.56",
      "-500.00",
      "7",
    ]);
    expect(read(["£5", "-£5", "£-5", "GBP 5", "5 GBP"])).toMatchObject({
      kind: "currency",
      unit: "GBP",
      values: ["5", "-5", "-5", "5", "5"],
    });
    const minus = read(["1234-", "−5", "+7"]);
    expect(minus).toMatchObject({ kind: "integer", values: ["-1234", "-5", "7"] });
    expect(minus.note).toContain("trailing minus");
  });

  it("keeps a percent as its number with the unit %, and says so", () => {
    const reading = read(["12.5%", "3 %", "-0.5%", "(2%)"]);
    expect(reading).toMatchObject({
      kind: "percent",
      values: ["12.5", "3", "-0.5", "-2"],
      unit: "%",
    });
    expect(reading.note).toContain("not divided by 100");
  });

  it("sniffs the decimal comma per column from the values that decide it", () => {
    expect(read(["500,00", "12,5", "1.234,56"])).toMatchObject({
      kind: "number",
      decimal: ",",
      values: ["500.00", "12.5", "1234.56"],
    });
    expect(read(["500,00"]).note).toContain("decimal comma");
    // "1.234" alone is ambiguous: another value proves the comma, so the dot groups thousands.
    expect(read(["1.234", "5.678", "2.500,10"])).toMatchObject({
      decimal: ",",
      values: ["1234", "5678", "2500.10"],
    });
    expect(read(["1.234", "1.234.567"])).toMatchObject({
      kind: "integer",
      values: ["1234", "1234567"],
    });
    // "1,234" with "0,5": the comma is the decimal mark throughout.
    expect(read(["1,234", "0,5"]).values).toEqual(["1.234", "0.5"]);
    // A decimal point proven elsewhere keeps "1.234" a decimal.
    expect(read(["1,234.56", "1.234"]).values).toEqual(["1234.56", "1.234"]);
  });

  it('reads an undecided "1.234" with a decimal point as pandas does, unless the locale says otherwise', () => {
    const plain = read(["1.234", "5.678"]);
    expect(plain).toMatchObject({ kind: "number", values: ["1.234", "5.678"], changed: 0 });
    const german = read(["1.234", "5.678"], { decimal: "," });
    expect(german).toMatchObject({ kind: "integer", values: ["1234", "5678"], decimal: "," });
    expect(german.note).toContain("no value decides the mark");
    expect(read(["1,234", "12"])).toMatchObject({ kind: "integer", values: ["1234", "12"] });
  });

  it("leaves a column whose values disagree on the decimal mark as text", () => {
    const values = ["1,234.56", "500,00"];
    expect(read(values)).toEqual({ kind: "text", values, changed: 0 });
  });

  it("reads spaces, no-break and thin spaces and apostrophes between thousands", () => {
    expect(
      read(["1 234 567", "1\u00a0234", "12\u2009345", "1\u202f000", "1'234.50", "2’000"]),
    ).toMatchObject({
      kind: "number",
      values: ["1234567", "1234", "12345", "1000", "1234.50", "2000"],
    });
    expect(read(["1 234,5", "7"])).toMatchObject({ decimal: ",", values: ["1234.5", "7"] });
  });

  it('reads TableBench\'s "16, 122" (a space after the thousands comma) as one number, and says so', () => {
    const reading = read(["16, 122", "1,234", "980"]);
    expect(reading).toMatchObject({ kind: "integer", values: ["16122", "1234", "980"] });
    expect(reading.note).toContain("read as a typo");
    // Lists of small numbers are no such typo: they stay text.
    expect(read(["1, 2", "3, 4"]).kind).toBe("text");
  });

  it("keeps integers exact, whatever their size, and exponents as written", () => {
    expect(read(["9,223,372,036,854,775,808", "1"]).values).toEqual(["9223372036854775808", "1"]);
    expect(read(["1.5e3", "2E-4", "7"])).toMatchObject({
      kind: "number",
      values: ["1.5e3", "2e-4", "7"],
    });
    expect(read(["1.5", "-inf", "Infinity"]).values).toEqual(["1.5", "-inf", "inf"]);
  });

  it("reads the NA spellings and dashes as missing (pandas' own spellings stay as they are)", () => {
    expect(read(["1", "-", "n/a", "NA", "", "–", "N/A", "..", "  "])).toMatchObject({
      kind: "integer",
      values: ["1", "", "n/a", "NA", "", "", "N/A", "", ""],
    });
  });

  it("reads a column of years as integers, not dates, and 0/1 as integers, not booleans", () => {
    expect(read(["1990", "2001", "2024"])).toEqual({
      kind: "integer",
      values: ["1990", "2001", "2024"],
      decimal: ".",
      changed: 0,
    });
    expect(read(["0", "1", "1"])).toMatchObject({ kind: "integer", values: ["0", "1", "1"] });
  });
});

describe("readColumn: values that only look like numbers stay text", () => {
  const traps: [string, string[]][] = [
    ["product codes with leading zeros", ["00123", "00456", "01000"]],
    ["ZIP codes, some with a leading zero", ["02134", "90210", "10001"]],
    ["phone numbers", ["+1 555 123 4567", "555-1234", "(555) 123-4567"]],
    ["international phone numbers", ["+44 20 7946 0958", "+1 234 567 890"]],
    ["version numbers", ["1.2.3", "1.10.0", "2.0.11"]],
    ["IDs", ["A-100", "B-200", "C-300"]],
    ["a mixed column", ["12", "abc", "3"]],
    ["two currencies", ["$5", "€5"]],
    ["currency with percent", ["$5", "5%"]],
    ["scores", ["3-1", "2-2"]],
    ["fractions", ["1/2", "3/4"]],
    ["ranges", ["10-20", "20-30"]],
    ["numbers with words", ["12 apples", "3 pears"]],
    ["doubled signs", ["--5", "+-5"]],
  ];
  it.each(traps)("%s", (_, values) => {
    expect(read(values)).toEqual({ kind: "text", values, changed: 0 });
  });
});

describe("readColumn: dates", () => {
  it("reads dates day first when a day above 12 stands first", () => {
    const reading = read(["05.03.2024", "13.03.2024", ""]);
    expect(reading).toMatchObject({
      kind: "date",
      values: ["2024-03-05", "2024-03-13", ""],
      dayFirst: true,
      dayFirstBy: "values",
      changed: 2,
    });
    expect(reading.note).toBe('day-first dates "05.03.2024" -> 2024-03-05');
  });

  it("reads dates month first when a day above 12 stands second", () => {
    expect(read(["03/05/2024", "03/13/2024"])).toMatchObject({
      values: ["2024-03-05", "2024-03-13"],
      dayFirst: false,
      dayFirstBy: "values",
    });
  });

  it("falls back on the locale's order, else the separator's custom, and says so", () => {
    const slash = read(["03/05/2024", "04/06/2024"]);
    expect(slash).toMatchObject({ values: ["2024-03-05", "2024-04-06"], dayFirst: false });
    expect(slash.dayFirstBy).toBe("separator");
    expect(slash.note).toContain("no day above 12 decides it");
    expect(read(["03.05.2024"])).toMatchObject({ values: ["2024-05-03"], dayFirst: true });
    const british = read(["03/05/2024"], { dayFirst: true });
    expect(british).toMatchObject({ values: ["2024-05-03"], dayFirstBy: "preference" });
    // The values win over the preference.
    expect(read(["03/13/2024"], { dayFirst: true }).values).toEqual(["2024-03-13"]);
  });

  it("reads the common spellings of one day alike", () => {
    expect(
      read(["5 Mar 2024", "March 5, 2024", "2024/03/05", "2024-03-05", "5-Mar-24", "Mar. 5 2024"]),
    ).toMatchObject({ kind: "date", values: Array(6).fill("2024-03-05") });
    const iso = read(["2024-03-05", "2024-12-31"]);
    expect(iso).toMatchObject({ kind: "date", changed: 0 });
    expect(iso.note).toBeUndefined();
  });

  it("reads times into ISO datetimes, midnight for the dates without one", () => {
    expect(
      read(["2024-03-05T14:30:00", "05.03.2024 14:30", "2024/03/05 2:30 PM", "2024-03-06"]).values,
    ).toEqual([
      "2024-03-05 14:30:00",
      "2024-03-05 14:30:00",
      "2024-03-05 14:30:00",
      "2024-03-06 00:00:00",
    ]);
    expect(read(["3/5/2024 12:05 AM", "3/13/2024 11:59:59 pm"])).toMatchObject({
      kind: "datetime",
      values: ["2024-03-05 00:05:00", "2024-03-13 23:59:59"],
    });
    expect(read(["2024-03-05T14:30:00Z"]).values).toEqual(["2024-03-05 14:30:00+00:00"]);
  });

  it("leaves dates that read neither way, or disagree on the order, as text", () => {
    for (const values of [
      ["13/01/2024", "01/13/2024"],
      ["31.02.2024", "01.03.2024"],
      ["2024-13-01"],
      ["05.03.2024", "soon"],
    ]) {
      expect(read(values)).toEqual({ kind: "text", values, changed: 0 });
    }
  });
});

describe("readColumn: booleans", () => {
  it("reads yes/no, Y/N and true/false spellings as True/False when the whole column is", () => {
    expect(read(["yes", "No", "Y", "n", "TRUE", "false", ""])).toMatchObject({
      kind: "bool",
      // TRUE and false are booleans to pandas already: they stay as written.
      values: ["True", "False", "True", "False", "TRUE", "false", ""],
    });
    expect(read(["True", "False"])).toMatchObject({ kind: "bool", changed: 0 });
    expect(read(["yes", "maybe"]).kind).toBe("text");
  });
});

describe("readColumn: units", () => {
  it("takes the unit from the header and the header without it as the name", () => {
    expect(readColumn("Revenue (USD m)", ["1,250", "980"])).toMatchObject({
      kind: "integer",
      unit: "USD m",
      name: "Revenue",
      values: ["1250", "980"],
    });
    expect(readColumn("Share (%)", ["12.5", "3"])).toMatchObject({
      kind: "number",
      unit: "%",
      name: "Share",
      changed: 0,
    });
    // The header's unit is more precise than the values' symbol.
    expect(readColumn("Revenue ($m)", ["$1.5", "$2"]).unit).toBe("USD m");
  });

  it.each([
    ["Revenue (USD m)", { name: "Revenue", unit: "USD m" }],
    ["Revenue ($m)", { name: "Revenue", unit: "USD m" }],
    ["Price (€)", { name: "Price", unit: "EUR" }],
    ["Share %", { name: "Share", unit: "%" }],
    ["Growth (in percent)", { name: "Growth", unit: "%" }],
    ["Weight [kg]", { name: "Weight", unit: "kg" }],
    ["Height (m)", { name: "Height", unit: "m" }],
    ["Density (people per km²)", { name: "Density", unit: "people per km²" }],
    ["GDP, USD bn", { name: "GDP", unit: "USD bn" }],
    ["Sales (in thousands)", { name: "Sales", unit: "thousands" }],
    ["Revenue (USD m) / Q3", { name: "Revenue / Q3", unit: "USD m" }],
    ["Population (2020)", {}],
    ["Author(s)", {}],
    ["Time (s)", { name: "Time", unit: "s" }],
    ["Group (A)", {}],
    ["Name (English)", {}],
    ["Total", {}],
  ])("header %s", (header, expected) => {
    expect(headerUnit(header)).toEqual(expected);
  });

  it("takes the unit from the values when the header has none", () => {
    expect(read(["€5", "€7"]).unit).toBe("EUR");
    expect(read(["5%"]).unit).toBe("%");
    expect(read(["5", "7"]).unit).toBeUndefined();
    expect(readColumn("Total", ["5"]).name).toBeUndefined();
  });
});

describe("readColumn: text and size", () => {
  it("returns a text column's values unchanged", () => {
    const values = ["Ada", "", "NA", "  padded  "];
    const reading = read(values);
    expect(reading).toEqual({ kind: "text", values, changed: 0 });
    expect(reading.values).not.toBe(values);
  });

  it("reads a large formatted column whole (linear, one pass per reading)", () => {
    const n = 200_000;
    const values = Array.from({ length: n }, (_, i) => `$${(i * 1001).toLocaleString("en-US")}`);
    const reading = read(values);
    expect(reading.kind).toBe("currency");
    expect(reading.values).toHaveLength(n);
    expect(reading.values[n - 1]).toBe(String((n - 1) * 1001));
    // One odd value at the end turns the whole column back to text.
    expect(read([...values, "call us"]).kind).toBe("text");
  });
});

describe("parseNumber", () => {
  it.each([
    ["$1,234.5", undefined, 1234.5],
    ["1.234,5", ",", 1234.5],
    ["1.234", undefined, 1.234],
    ["1.234", ",", 1234],
    ["1,234", ",", 1.234],
    ["(12)", undefined, -12],
    ["12.5%", undefined, 12.5],
    ["1 234", undefined, 1234],
    ["16, 122", undefined, 16122],
    ["-", undefined, null],
    ["", undefined, null],
    ["abc", undefined, null],
    ["00123", undefined, null],
    ["1.234,5", ".", null],
  ] as const)("%s (decimal %s) -> %s", (text, decimal, expected) => {
    expect(parseNumber(text, decimal)).toBe(expected);
  });
});

describe("dot leaders", () => {
  it("are removed from labels, and only there", () => {
    const read = readColumn("Period", [
      "January . . . . .",
      "February. . . .",
      "Total..........",
      "a.b.c",
    ]);
    expect(read.values).toEqual(["January", "February", "Total", "a.b.c"]);
    expect(read.note).toMatch(/dot leaders removed/);
    expect(readColumn("v", ["1.2.3", "...", "etc..."]).values).toEqual(["1.2.3", "...", "etc..."]);
  });
});
