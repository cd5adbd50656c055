import { existsSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { E2BSandbox } from "../../sandbox/e2b.js";
import { LocalSandbox } from "../../sandbox/local.js";
import type { Sandbox } from "../../sandbox/types.js";
import { useTempHome } from "../support/env.js";
import { FakeE2B } from "../support/fake-e2b.js";
import { medalsRef, tableRef } from "../support/table-fixtures.js";
import { eventually } from "./hostile/procfs.js";

/**
 * What every sandbox backend must do, run against each: the local pool, and E2B through
 * the fake SDK (tests/support/fake-e2b.ts). What only one backend does is tested in
 * sandbox-local.test.ts, sandbox-e2b.test.ts and sandbox-hostile.test.ts.
 */
interface Backend {
  name: "local" | "e2b";
  /** Starts the one sandbox the whole suite runs on. */
  start(): Promise<Sandbox>;
  /** What the sandbox runs on (interpreter processes, remote sandboxes): must not change. */
  footprint(sandbox: Sandbox): unknown;
  /** How soon an endless loop given 500 ms must come back as a Timeout. */
  loopStoppedWithinMs: number;
  cleanup(): void;
}

function localBackend(): Backend {
  return {
    name: "local",
    start: () => LocalSandbox.start({ interpreters: 2 }),
    footprint: (sandbox) => [...(sandbox as LocalSandbox).interpreterPids].sort(),
    loopStoppedWithinMs: 3_000,
    cleanup: () => {},
  };
}

function e2bBackend(): Backend {
  const fake = new FakeE2B();
  return {
    name: "e2b",
    // One sandbox for the whole suite: the cases must not break it.
    start: () => E2BSandbox.start({ apiKey: "test-key", sdk: fake, poolSize: 1 }),
    footprint: () => fake.creates.length,
    // Each run starts python3 and imports pandas afresh.
    loopStoppedWithinMs: 8_000,
    cleanup: () => fake.cleanup(),
  };
}

const backends: [string, () => Backend][] = [
  ["local", localBackend],
  ["e2b", e2bBackend],
];

describe.each(backends)("the %s sandbox (the shared contract)", (_name, makeBackend) => {
  const backend = makeBackend();
  let sandbox: Sandbox;
  let initialFootprint: unknown;
  let medals: TableRef;

  beforeAll(async () => {
    useTempHome();
    medals = await medalsRef();
    sandbox = await backend.start();
    initialFootprint = backend.footprint(sandbox);
  });

  afterAll(async () => {
    await sandbox?.close();
    backend.cleanup();
  });

  it("reports its backend, with python and pandas versions", async () => {
    const info = await sandbox.info();
    expect(info.backend).toBe(backend.name);
    expect(info.runtime).toMatch(/Python 3\.\d+.*pandas \d+\.\d+/);
  });

  it("runs pandas code with df, stdout, spans and intermediate tables", async () => {
    const code = [
      "top = df[df['gold'] > 30]",
      "top = top[['nation', 'gold']].reset_index(drop=True)",
      "print(int(df['gold'].sum()))",
      "print(medals is df, len(top))",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [medals] });
    expect(result.error).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("126\nTrue 2\n");
    expect(result.spans).toEqual([
      { line: 3, start: 0, end: 4 },
      { line: 4, start: 4, end: 11 },
    ]);
    expect(result.truncated).toBe(false);
    expect(result.durationMs).toBeGreaterThan(0);

    const [top] = result.tables;
    expect(result.tables).toHaveLength(1);
    expect(top?.variable).toBe("top");
    expect(top?.line).toBe(2);
    expect(top?.table).toMatchObject({
      id: "table:top",
      name: "top",
      rows: 2,
      columns: [
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    });
    expect(await readFile(top?.table.uri ?? "", "utf8")).toBe(
      "nation,gold\nUnited States,39\nChina,38\n",
    );
  });

  it("gives one table as df and by its name", async () => {
    const result = await sandbox.execute({
      code: "print(int(df['gold'].sum()))\nprint(medals is df, len(medals))",
      tables: [medals],
    });
    expect(result.error).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("126\nTrue 4\n");
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("gives several tables by name, the first also as df", async () => {
    const other = await tableRef("codes", "nation,code\nChina,CHN\nJapan,JPN", [
      { name: "nation", dtype: "object" },
      { name: "code", dtype: "object" },
    ]);
    const result = await sandbox.execute({
      code: "print(len(medals.merge(codes, on='nation')))\nprint(df is medals)",
      tables: [medals, other],
    });
    expect(result.stdout).toBe("2\nTrue\n");
  });

  it("records which line wrote each part of stdout", async () => {
    const code = [
      "total = 0",
      "print('first')",
      "def shout(text):\n    print(text.upper(), end='!\\n')",
      "print('second', 2)",
      "shout('third')",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [] });
    expect(result.stdout).toBe("first\nsecond 2\nTHIRD!\n");
    expect(result.spans).toEqual([
      { line: 2, start: 0, end: 6 },
      { line: 5, start: 6, end: 15 },
      { line: 4, start: 15, end: 22 },
    ]);
  });

  it.each([
    [
      "a missing column",
      "x = 1\nprint('before')\ny = df['no such column']\nprint('after')",
      {
        type: "KeyError",
        message: "'no such column'",
        line: 3,
      },
    ],
    [
      "a raised exception",
      "print('before')\nraise ValueError('boom')\nprint('after')",
      {
        type: "ValueError",
        message: "boom",
        line: 2,
      },
    ],
  ])(
    "reports %s with its type, message and line, and the output before it",
    async (_what, code, error) => {
      const result = await sandbox.execute({ code, tables: [medals] });
      expect(result.ok).toBe(false);
      expect(result.error).toEqual(error);
      expect(result.stdout).toBe("before\n");
    },
  );

  it("reports the line of an exception raised inside a function", async () => {
    const result = await sandbox.execute({
      code: "def f():\n    return 1 / 0\n\nf()",
      tables: [],
    });
    expect(result.error).toMatchObject({ type: "ZeroDivisionError", line: 2 });
  });

  it("reports a syntax error with its line", async () => {
    const result = await sandbox.execute({ code: "a = 1\nb = = 2\nprint(a)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("SyntaxError");
    expect(result.error?.line).toBe(2);
  });

  it("returns intermediate DataFrames as artifacts with their assigning line", async () => {
    const code = [
      "import pandas as pd",
      "top = df[df['gold'] > 30]",
      "top = top[['nation', 'gold']].reset_index(drop=True)",
      "golds = df['gold']",
      "_hidden = df.head(1)",
      "by_nation = df.set_index('nation')",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [medals] });
    expect(result.ok).toBe(true);
    const byName = new Map(result.tables.map((t) => [t.variable, t]));
    expect([...byName.keys()]).toEqual(["top", "golds", "by_nation"]);

    const top = byName.get("top");
    expect(top?.line).toBe(3);
    expect(top?.table).toMatchObject({
      id: "table:top",
      name: "top",
      rows: 2,
      columns: [
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    });
    const topCsv = await readFile(top?.table.uri ?? "", "utf8");
    expect(topCsv).toBe("nation,gold\nUnited States,39\nChina,38\n");

    expect(byName.get("golds")?.line).toBe(4);
    expect(byName.get("golds")?.table.columns).toEqual([{ name: "gold", dtype: "int64" }]);
    // A non-default index is kept as a column.
    const nationCsv = await readFile(byName.get("by_nation")?.table.uri ?? "", "utf8");
    expect(nationCsv.split("\n")[0]).toBe("nation,gold,silver");
    expect(byName.get("by_nation")?.table.rows).toBe(4);
  });

  it("reports an input table only when the code rebinds its name", async () => {
    const untouched = await sandbox.execute({
      code: "alias = df\nmedals['gold'] = 0\nprint(len(df))",
      tables: [medals],
    });
    expect(untouched.tables).toEqual([]);

    const rebound = await sandbox.execute({
      code: "print('x')\ndf = df[df['silver'] > 20]",
      tables: [medals],
    });
    expect(rebound.tables.map((t) => [t.variable, t.line, t.table.rows])).toEqual([["df", 2, 3]]);
  });

  it("reports a table it cannot read as TableLoadError, and the next request works", async () => {
    const gone = await tableRef("gone", "g\n4242", [{ name: "g", dtype: "int64" }]);
    rmSync(gone.uri);
    const result = await sandbox.execute({ code: "print(len(df))", tables: [gone] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("TableLoadError");
    const next = await sandbox.execute({ code: "print(int(df.gold.sum()))", tables: [medals] });
    expect(next.stdout).toBe("126\n");
  });

  it("runs each request in a fresh scratch directory that is removed afterwards", async () => {
    const code =
      "import os\nopen('note.txt', 'w').write('x')\nprint(os.getcwd())\nprint(os.listdir('.'))";
    const first = await sandbox.execute({ code, tables: [] });
    const second = await sandbox.execute({ code, tables: [] });
    const [dirA, listingA] = first.stdout.split("\n");
    const [dirB, listingB] = second.stdout.split("\n");
    expect(dirA).not.toBe(dirB);
    expect(listingA).toBe("['note.txt']");
    expect(listingB).toBe("['note.txt']");
    expect(await eventually(() => !existsSync(dirA ?? "") && !existsSync(dirB ?? ""))).toBe(true);
  });

  it("removes the scratch directory of a run with tables once they are stored", async () => {
    const result = await sandbox.execute({
      code: "import os\nprint(os.getcwd())\nkept = df.head(2)",
      tables: [medals],
    });
    expect(result.tables.map((t) => t.variable)).toEqual(["kept"]);
    const scratch = result.stdout.trim();
    expect(await eventually(() => !existsSync(scratch))).toBe(true);
    expect(await readFile(result.tables[0]?.table.uri ?? "", "utf8")).toMatch(
      /^nation,gold,silver\n/,
    );
  });

  it("stops an endless loop at its timeout, and the next request works", async () => {
    const started = Date.now();
    const result = await sandbox.execute({
      code: "print('start')\nwhile True:\n    pass",
      tables: [],
      timeoutMs: 500,
    });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Timeout");
    expect(result.error?.message).toBe("execution exceeded 500 ms");
    expect(Date.now() - started).toBeLessThan(backend.loopStoppedWithinMs);

    const next = await sandbox.execute({ code: "print(6 * 7)", tables: [] });
    expect(next.stdout).toBe("42\n");
  });

  it.each([
    ["output over the cap", "print('a' * 5000)\nprint('never seen')", "a", 1000],
    [
      "100 MB of printing, without a crash",
      "for _ in range(100):\n    print('x' * 1_000_000)\nprint('done')",
      "x",
      10_000,
    ],
  ])("truncates %s", async (_what, code, char, outputBytes) => {
    const result = await sandbox.execute({ code, tables: [], outputBytes });
    expect(result.ok).toBe(true);
    expect(result.truncated).toBe(true);
    expect(result.stdout).toBe(char.repeat(outputBytes));
  });

  it("reports code that exits on its own (os._exit(3)) as Crashed, and the next request works", async () => {
    const result = await sandbox.execute({ code: "import os\nos._exit(3)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Crashed");
    expect(result.error?.message).toMatch(/exited with code 3/);

    const next = await sandbox.execute({ code: "print('still here')", tables: [] });
    expect(next.stdout).toBe("still here\n");
  });

  it("round-trips non-ASCII output with spans in JavaScript string offsets", async () => {
    const result = await sandbox.execute({
      code: "print('Zürich → 東京 🏅')\nprint('end')",
      tables: [],
    });
    expect(result.stdout).toBe("Zürich → 東京 🏅\nend\n");
    const [first, second] = result.spans;
    expect(result.stdout.slice(first?.start, first?.end)).toBe("Zürich → 東京 🏅\n");
    expect(result.stdout.slice(second?.start, second?.end)).toBe("end\n");
  });

  it("keeps writes to the raw file descriptors away from the protocol", async () => {
    const result = await sandbox.execute({
      code: "import os, sys\nos.write(1, b'{not json\\n')\nos.write(2, b'noise\\n')\nprint('ok')",
      tables: [],
    });
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("ok\n");
  });

  it("keeps 50 MB written to the raw descriptors out of the result", async () => {
    const result = await sandbox.execute({
      code: "import os\nos.write(1, b'y' * 50_000_000)\nos.write(2, b'z' * 50_000_000)\nprint('ok')",
      tables: [],
    });
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("ok\n");
    expect(result.stderr.length).toBeLessThan(100_000);
  });

  it("holds the code to its memory limit", async () => {
    const result = await sandbox.execute({
      code: "block = bytearray(4 * 1024 ** 3)\nprint('allocated')",
      tables: [],
      memoryMb: 1536,
    });
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ type: "MemoryError", line: 1 });
  });

  it("runs concurrent requests one after another", async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) => sandbox.execute({ code: `print(${n} * 10)`, tables: [] })),
    );
    expect(results.map((r) => r.stdout)).toEqual(["10\n", "20\n", "30\n"]);
  });

  it("rejects a malformed request", async () => {
    await expect(
      sandbox.execute({ code: "print(1)", tables: [{ name: "broken" } as unknown as TableRef] }),
    ).rejects.toThrow();
  });

  it("ran every case on the runtime it started with", () => {
    expect(backend.footprint(sandbox)).toEqual(initialFootprint);
  });

  it("refuses requests once closed, and a second close() does no harm", async () => {
    await sandbox.close();
    await expect(sandbox.close()).resolves.toBeUndefined();
    await expect(sandbox.execute({ code: "print(1)", tables: [] })).rejects.toThrow(/closed/);
  });
});
