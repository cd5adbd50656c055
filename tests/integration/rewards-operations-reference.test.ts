import { afterAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { findPython } from "../../sandbox/python.js";
import { OPERATION_LABELS, operationLabels } from "../../training/rewards/operations.js";
import { pandasSnippets } from "../support/generated-cases.js";
import { askReference } from "../support/reference-python.js";

/*
 * The code reward's operation labels against the released Mixture-of-Minds reader
 * (extract_operations, rewritten in python_reference.py from its text), both run by the
 * sandbox's Python: ours through the sandbox as the reward runs it, the release's as a script,
 * on 400 seeded pandas programs and the cases where the release reads code oddly.
 */
afterAll(() => closeSandboxes());

const ODD = [
  "x = DataFrame(rows, columns=cols)", // a bare DataFrame() is not counted
  "x = to_numeric(df['a'], errors='coerce')", // nor a bare to_numeric()
  "x = df[['a', 'b']]", // a list key is not a literal to it: no select_columns
  "x = df.iloc[-1]", // nor -1 (a unary minus): no select_bottom_row
  "x = df.iloc[False]\ny = df[0.0]", // equal to 0: the top row
  "x = df[(k := 'a')]\ny = df['a'.strip]", // a literal one level down is a key
  "m = df['a'] == True", // a bool is an int literal: a filter by value
  "m = df['a'] != None",
  "m = 3 < df['a']", // a subscript on the right compares columns
  "total += df['a']", // += is no BinOp
  "answer: int = 1\nresult, x = 1, 2\nfinal_answer = 3", // no plain answer assignment
  "Summary = df.sort_index().fillna(0)['a'].str.strip()", // methods the release does not know
  "print(df['a'", // does not parse
  "",
];

describe("operation labels, against the released extract_operations", () => {
  it("labels every program as the release does", async () => {
    const snippets = [...ODD, ...pandasSnippets(400, 20_250_522)];
    const python = (await findPython()).executable;
    const expected = askReference<string[]>(python, "mom_operations", snippets);
    const sandbox = await getSandbox("local");
    const ours = await Promise.all(snippets.map((code) => operationLabels(code, sandbox)));
    const wrong = snippets.flatMap((code, i) =>
      JSON.stringify(ours[i]) === JSON.stringify(expected[i])
        ? []
        : [{ code, ours: ours[i], release: expected[i] }],
    );
    expect(wrong.slice(0, 5)).toEqual([]);

    // The programs reach every label the release can give, and the release never gives two.
    const given = new Set(expected.flat());
    const unreachable = ["select_columns", "select_bottom_row"];
    expect([...given].sort()).toEqual(
      OPERATION_LABELS.filter((l) => !unreachable.includes(l)).sort(),
    );
    expect(expected.filter((labels) => labels.length === 0).length).toBeGreaterThan(20);
    expect(expected.filter((labels) => labels.length >= 5).length).toBeGreaterThan(100);
  }, 240_000);
});
