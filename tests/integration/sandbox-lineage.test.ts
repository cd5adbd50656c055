import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeResult, ExecResult, TableRef } from "../../blackboard/schemas.js";
import { E2BSandbox } from "../../sandbox/e2b.js";
import { LocalSandbox } from "../../sandbox/local.js";
import type { ExecRequest, Sandbox } from "../../sandbox/types.js";
import { useTempHome } from "../support/env.js";
import { FakeE2B } from "../support/fake-e2b.js";
import { medalsRef, tableRef } from "../support/table-fixtures.js";

/**
 * The code's result as the sandbox returns it: typed, with whether it is derived from the
 * tables (re-runs on perturbed copies change it) and which rows and columns it rests on.
 * medals: United States 39/41, China 38/32, Japan 27/14, Great Britain 22/21 (rows 0..3).
 */

const STABLE = /unchanged when the table's values were perturbed: a literal or metadata/;

let medals: TableRef;
let hundred: TableRef;
let wide: TableRef;

beforeAll(async () => {
  useTempHome();
  medals = await medalsRef();
  const lines = ["n,label"];
  for (let i = 0; i < 100; i++) lines.push(`${i},row${i}`);
  hundred = await tableRef("hundred", lines.join("\n"), [
    { name: "n", dtype: "int64" },
    { name: "label", dtype: "object" },
  ]);
  // An election file's width: a name and 40 columns of votes.
  const columns = ["name", ...Array.from({ length: 40 }, (_, c) => `v${c}`)];
  const rows = Array.from({ length: 30 }, (_, r) =>
    [`seat${r}`, ...columns.slice(1).map((_, c) => String((r * 41 + c * 7) % 97))].join(","),
  );
  wide = await tableRef(
    "wide",
    [columns.join(","), ...rows].join("\n"),
    columns.map((name, c) => ({ name, dtype: c === 0 ? "object" : "int64" })),
  );
});

function resultOf(run: ExecResult): CodeResult {
  expect(run.error).toBeNull();
  expect(run.ok).toBe(true);
  if (!run.result) throw new Error(`no result: ${JSON.stringify(run)}`);
  return run.result;
}

describe("the local sandbox's results and their lineage", () => {
  let sandbox: LocalSandbox;
  const run = (code: string, extra: Partial<ExecRequest> = {}) =>
    sandbox.execute({ code, tables: [medals], ...extra });

  beforeAll(async () => {
    sandbox = await LocalSandbox.start({ interpreters: 1 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it.each([
    ["print(203)", "printed", "scalar", [203]],
    ["result = 203", "declared", "scalar", [203]],
    // A printed list is read as its items.
    ["print(df.columns.tolist())", "printed", "list", ["nation", "gold", "silver"]],
    ["result = df.shape[1]", "declared", "scalar", [3]],
  ])("%s: a literal or metadata is not derived", async (code, from, kind, values) => {
    const result = resultOf(await run(code));
    expect(result).toMatchObject({ from, kind, values, line: 1, derived: "no" });
    expect(result.derivation).toMatch(STABLE);
    // Traced: no column's values and no row matter.
    expect(result.lineage).toEqual([{ table: "medals", rows: [], columns: [] }]);
  });

  it.each([
    ["result = len(df)", 4, [0, 1, 2, 3], []],
    ["print(df['gold'].sum())", 126, [0, 1, 2, 3], ["gold"]],
    ["result = df.loc[df.gold.idxmax(), 'nation']", "United States", [0], ["nation", "gold"]],
    ["result = int((df.gold > 25).sum())", 3, [0, 1, 2], ["gold"]],
    ["big = df[df.gold > 25]\nresult = big.shape[0]", 3, [0, 1, 2], ["gold"]],
    ["result = 'Japan' in df.nation.values", true, [2], ["nation"]],
    ["result = df[df.nation == 'Japan'][['gold']]", 27, [2], ["nation", "gold"]],
  ])(
    "%s: computed from the table, with its rows and columns",
    async (code, value, rows, columns) => {
      const result = resultOf(await run(code));
      expect(result.values).toEqual([value]);
      expect(result.kind).toBe("scalar");
      expect(result.derived).toBe("yes");
      expect(result.derivation).toMatch(/computed from the table/);
      expect(result.lineage).toHaveLength(1);
      expect(result.lineage[0]?.rows).toEqual(rows);
      expect([...(result.lineage[0]?.columns ?? [])].sort()).toEqual([...columns].sort());
    },
  );

  it("takes the declared result over printed lines, and the last printed line otherwise", async () => {
    const declared = resultOf(await run("print('noise')\nresult = int(df.gold.max())\nprint(1)"));
    expect(declared).toMatchObject({ from: "declared", values: [39], line: 2, text: "39" });
    const printed = resultOf(await run("print('rows:', len(df))\n\nprint(int(df.silver.sum()))\n"));
    expect(printed).toMatchObject({ from: "printed", values: [108], line: 3, text: "108" });
    const text = resultOf(await run("print('winner:', df.nation.iloc[0])"));
    expect(text).toMatchObject({
      from: "printed",
      values: ["winner: United States"],
      derived: "yes",
    });
  });

  it("types series, frames, lists and scalars", async () => {
    const series = resultOf(
      await run("result = df.groupby('nation').gold.sum().sort_values(ascending=False).head(2)"),
    );
    expect(series).toMatchObject({
      kind: "series",
      values: [39, 38],
      labels: ["United States", "China"],
      derived: "yes",
    });
    expect(series.text).toContain("United States");
    // Grouped rows lose their ids: rows by removal, one at a time (the table is small).
    expect(series.lineage[0]?.columns?.sort()).toEqual(["gold", "nation"]);

    const frame = resultOf(await run("result = df[df.gold < 30][['nation', 'gold']]"));
    expect(frame).toMatchObject({
      kind: "frame",
      values: ["Japan", 27, "Great Britain", 22],
      labels: [2, 3],
      derived: "yes",
    });
    expect(frame.lineage[0]?.rows).toEqual([2, 3]);

    const column = resultOf(await run("result = df[['gold']]"));
    expect(column).toMatchObject({ kind: "series", values: [39, 38, 27, 22], labels: [] });

    const list = resultOf(await run("result = sorted(df.nation)[:2]"));
    expect(list).toMatchObject({
      kind: "list",
      values: ["China", "Great Britain"],
      derived: "yes",
    });

    const scalars = resultOf(
      await run(
        "result = [np.int64(3), np.float64(2.5), float('nan'), None, pd.Timestamp('2024-01-05'), pd.Timestamp('2024-01-05 10:30'), np.bool_(True)]",
      ),
    );
    expect(scalars.values).toEqual([3, 2.5, null, null, "2024-01-05", "2024-01-05T10:30:00", true]);
    expect(scalars.derived).toBe("no");

    const mean = resultOf(await run("result = df.gold.mean()"));
    expect(mean).toMatchObject({ kind: "scalar", values: [31.5] });
  });

  it("keeps at most 1000 values and a short text", async () => {
    const result = resultOf(await run("result = list(range(5000))"));
    expect(result.values).toHaveLength(1000);
    expect(result.text.length).toBeLessThanOrEqual(500);
  });

  it("re-runs the code in fresh processes: state its first run leaves behind cannot fake a derivation", async () => {
    // The first run stores a fingerprint of its table; in one interpreter, every re-run saw
    // it and answered otherwise on perturbed copies, which looked like a derived result.
    const code = `import builtins
seen = int(df.gold.sum())
if not hasattr(builtins, "first_seen"):
    builtins.first_seen = seen
result = 42 if seen == builtins.first_seen else 43`;
    const result = resultOf(await run(code));
    expect(result.values).toEqual([42]);
    expect(result.derived).toBe("no");
    expect(result.derivation).toMatch(/^unchanged when the table's values were perturbed/);
  });

  it("re-runs the code in folders of their own: a file its first run leaves cannot fake a derivation", async () => {
    // The first run writes its table's fingerprint into scratch; a re-run reading it there
    // would answer otherwise on perturbed copies.
    const code = `import os
root = os.getcwd().split("/rerun-")[0]
mark = os.path.join(root, "first_seen.txt")
seen = int(df.gold.sum())
try:
    first = int(open(mark).read())
except FileNotFoundError:
    first = seen
    with open(mark, "w") as handle:
        handle.write(str(seen))
result = 42 if seen == first else 43`;
    const result = resultOf(await run(code));
    expect(result.values).toEqual([42]);
    expect(result.derived).not.toBe("yes");
  });

  it("takes a trace made before for the same code on the same tables, and only then", async () => {
    const code = "big = df[df.gold > 25]\nresult = int(big.silver.sum())";
    const reused = sandbox.tracesReused;
    const first = resultOf(await run(code));
    expect(first).toMatchObject({ values: [87], derived: "yes" });
    expect(first.lineage).toEqual([
      { table: "medals", rows: [0, 1, 2], columns: expect.any(Array) },
    ]);
    expect(sandbox.tracesReused).toBe(reused);
    // The same code and table: the same result, its trace not made again.
    const again = resultOf(await run(code));
    expect(again).toEqual(first);
    expect(sandbox.tracesReused).toBe(reused + 1);
    // The same code on another table is traced for that table.
    const other = await tableRef("medals", "nation,gold,silver\nA,30,5\nB,20,7\nC,26,9", [
      { name: "nation", dtype: "object" },
      { name: "gold", dtype: "int64" },
      { name: "silver", dtype: "int64" },
    ]);
    const elsewhere = resultOf(await run(code, { tables: [other] }));
    expect(elsewhere).toMatchObject({ values: [14], derived: "yes" });
    expect(elsewhere.lineage[0]?.rows).toEqual([0, 2]);
    expect(sandbox.tracesReused).toBe(reused + 1);
  });

  it("traces again when the same code gives another result: a trace holds for its result only", async () => {
    const code = "print(int(df.gold.sum()) + int(np.random.randint(0, 10**9)))";
    const reused = sandbox.tracesReused;
    for (let i = 0; i < 3; i++) {
      const result = resultOf(await run(code));
      expect(result.derived).toBe("no");
      expect(result.derivation).toMatch(/not deterministic/);
    }
    expect(sandbox.tracesReused).toBe(reused);
  });

  it("calls code that is not deterministic not derived", async () => {
    const result = resultOf(await run("print(np.random.rand())"));
    expect(result.derived).toBe("no");
    expect(result.derivation).toMatch(/not deterministic/);
    expect(result.lineage).toEqual([{ table: "medals", rows: null, columns: null }]);
  });

  it("stays bounded when only the re-runs loop forever, and the interpreter keeps working", async () => {
    const loop = "total = int(df.gold.sum())\nwhile total != 126:\n    pass\nprint(total)";
    // A loop that swallows the first timeout it meets, too.
    const stubborn =
      "total = int(df.gold.sum())\nwhile total != 126:\n    try:\n        pass\n    except BaseException:\n        pass\nprint(total)";
    for (const code of [loop, stubborn]) {
      const started = performance.now();
      const answer = await run(code, { timeoutMs: 3_000 });
      const elapsed = performance.now() - started;
      const result = resultOf(answer);
      expect(result.values).toEqual([126]);
      expect(result.derived).toBe("unknown");
      expect(result.derivation).toMatch(/out of time/);
      // Half of what the run left, at most: well inside the timeout.
      expect(elapsed).toBeLessThan(3_000);
    }
    // A trace cut short is not kept: the same code is traced (and cut short) again.
    const reused = sandbox.tracesReused;
    expect(resultOf(await run(loop, { timeoutMs: 3_000 })).derivation).toMatch(/out of time/);
    expect(sandbox.tracesReused).toBe(reused);
    const after = await run("result = len(df)");
    expect(resultOf(after).derived).toBe("yes");
  });

  it("traces a longer table's rows by removing blocks of them: a few rows found, every row left unknown", async () => {
    // A sum over all 100 rows would take some 200 re-runs: its rows stay unknown, never half listed.
    const sum = resultOf(await run("result = int(df.n.sum())", { tables: [hundred] }));
    expect(sum.derived).toBe("yes");
    expect(sum.lineage).toEqual([{ table: "hundred", rows: null, columns: ["n"] }]);

    const picked = resultOf(await run("result = df[df.n % 25 == 0].label", { tables: [hundred] }));
    expect(picked).toMatchObject({ kind: "series", values: ["row0", "row25", "row50", "row75"] });
    expect(picked.lineage).toEqual([
      { table: "hundred", rows: [0, 25, 50, 75], columns: ["n", "label"] },
    ]);

    // A reset index holds positions, not row ids: the removals find the rows all the same.
    const reset = resultOf(
      await run("result = df[df.n % 25 == 0].label.reset_index(drop=True)", { tables: [hundred] }),
    );
    expect(reset.lineage[0]?.rows).toEqual([0, 25, 50, 75]);

    // A lookup and an extreme rest on one row.
    const lookup = resultOf(
      await run("result = df.loc[df.label == 'row42', 'n'].iloc[0]", { tables: [hundred] }),
    );
    expect(lookup.lineage[0]?.rows).toEqual([42]);
    const top = resultOf(await run("result = df.n.max()", { tables: [hundred] }));
    expect(top.lineage[0]?.rows).toEqual([99]);
  });

  it("traces a wide table's columns by perturbing blocks of them", async () => {
    const looked = resultOf(
      await run("result = int(wide.loc[wide.name == 'seat12', 'v33'].iloc[0])", { tables: [wide] }),
    );
    expect(looked.lineage).toEqual([{ table: "wide", rows: [12], columns: ["name", "v33"] }]);
  });

  it("traces only the tables the result rests on, so a workbook of many sheets is traced too", async () => {
    const code = "result = hundred.loc[hundred.label == 'row7', 'n'].iloc[0]";
    const many = [medals, hundred, medals, medals, medals, medals, medals, medals];
    const looked = resultOf(await run(code, { tables: many }));
    const byTable = Object.fromEntries(looked.lineage.map((l) => [l.table, l]));
    expect(byTable.hundred).toEqual({ table: "hundred", rows: [7], columns: ["n", "label"] });
    expect(byTable.medals).toEqual({ table: "medals", rows: [], columns: [] });
  });

  it("gives the tables the code left their lineage from their index", async () => {
    const answer = await run(
      "top = df[df.gold > 25]\nby_nation = df.groupby('nation').gold.sum()\nprint(len(top))",
    );
    const lineage = Object.fromEntries(answer.tables.map((t) => [t.variable, t.lineage]));
    expect(lineage.top).toEqual([
      { table: "medals", rows: [0, 1, 2], columns: ["nation", "gold", "silver"] },
    ]);
    expect(lineage.by_nation).toEqual([
      { table: "medals", rows: null, columns: ["nation", "gold"] },
    ]);
  });

  it("sees through code that reads its table's file again", async () => {
    const result = resultOf(
      await run("import pandas\nd = pandas.read_csv('medals.csv')\nprint(int(d.gold.sum()))"),
    );
    expect(result).toMatchObject({ values: [126], derived: "yes" });
    expect(result.lineage[0]?.columns).toEqual(["gold"]);
  });

  it("finds the columns of each table when there are several", async () => {
    const hosts = await tableRef("hosts", "nation,city\nJapan,Tokyo\nChina,Beijing", [
      { name: "nation", dtype: "object" },
      { name: "city", dtype: "object" },
    ]);
    const result = resultOf(
      await run("m = medals.merge(hosts, on='nation')\nresult = m.loc[m.gold.idxmax(), 'city']", {
        tables: [medals, hosts],
      }),
    );
    expect(result).toMatchObject({ values: ["Beijing"], derived: "yes" });
    const byTable = Object.fromEntries(result.lineage.map((l) => [l.table, l]));
    expect(byTable.medals?.columns?.sort()).toEqual(["gold", "nation"]);
    expect(byTable.medals?.rows).toEqual([1]);
    expect(byTable.hosts?.columns?.sort()).toEqual(["city", "nation"]);
    expect(byTable.hosts?.rows).toEqual([1]);
  });

  it("has no result for a failed run or one that declared and printed nothing", async () => {
    const failed = await run("result = 5\nprint(5)\nraise ValueError('late')");
    expect(failed.ok).toBe(false);
    expect(failed.result).toBeNull();
    const silent = await run("x = len(df)");
    expect(silent.ok).toBe(true);
    expect(silent.result).toBeNull();
  });

  it("leaves derivation unknown without a table, or with lineage turned off", async () => {
    const alone = resultOf(await run("print(203)", { tables: [] }));
    expect(alone).toMatchObject({ derived: "unknown", lineage: [] });
    expect(alone.derivation).toMatch(/no table/);
    const off = resultOf(await run("result = df[df.gold > 25].nation", { lineage: false }));
    expect(off).toMatchObject({ values: ["United States", "China", "Japan"], derived: "unknown" });
    expect(off.derivation).toMatch(/turned off/);
    // Untraced, rows still come off an index that holds them; columns stay unknown.
    expect(off.lineage).toEqual([{ table: "medals", rows: [0, 1, 2], columns: null }]);
  });
});

describe.each([
  ["local", () => ({ start: () => LocalSandbox.start({ interpreters: 1 }), cleanup: () => {} })],
  [
    "e2b",
    () => {
      const fake = new FakeE2B();
      return {
        start: () => E2BSandbox.start({ apiKey: "test-key", sdk: fake, poolSize: 1 }),
        cleanup: () => fake.cleanup(),
      };
    },
  ],
])("the %s sandbox traces results the same way", (_name, makeBackend) => {
  const backend = makeBackend();
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await backend.start();
  });

  afterAll(async () => {
    await sandbox?.close();
    backend.cleanup();
  });

  it("derived or not, with lineage, and not traced when asked", async () => {
    const computed = await sandbox.execute({
      code: "result = df.loc[df.gold.idxmax(), 'nation']",
      tables: [medals],
    });
    expect(resultOf(computed)).toMatchObject({
      from: "declared",
      values: ["United States"],
      derived: "yes",
      lineage: [{ table: "medals", rows: [0] }],
    });
    const literal = await sandbox.execute({ code: "print(203)", tables: [medals] });
    expect(resultOf(literal)).toMatchObject({ from: "printed", values: [203], derived: "no" });
    const off = await sandbox.execute({
      code: "result = len(df)",
      tables: [medals],
      lineage: false,
    });
    expect(resultOf(off)).toMatchObject({ values: [4], derived: "unknown" });
    const left = await sandbox.execute({ code: "top = df[df.gold > 30]", tables: [medals] });
    expect(left.result).toBeNull();
    expect(left.tables[0]?.lineage).toEqual([
      { table: "medals", rows: [0, 1], columns: ["nation", "gold", "silver"] },
    ]);
  });
});
