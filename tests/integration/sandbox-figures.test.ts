import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Figure, TableRef } from "../../blackboard/schemas.js";
import { chartScript, judgeChart, sandboxChartRunner } from "../../evals/metrics/chart.js";
import type { ChartRunner, EvalExample } from "../../evals/types.js";
import { E2BSandbox } from "../../sandbox/e2b.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { app } from "../../server/app.js";
import { setOperatorSettings } from "../../settings/operator.js";
import { putArtifact } from "../../storage/artifacts.js";
import { loadTable } from "../../tables/load.js";
import { EXAMPLES, useTempHome } from "../support/env.js";
import { FakeE2B } from "../support/fake-e2b.js";

/*
 * The local sandbox keeps the figures a run drew: read (as TableBench's parser reads them) and
 * saved as PNG and SVG into the artifact store, served to the SDK and Studio by name. The
 * evaluation's chart scoring takes its values from that same reading.
 */

let sandbox: LocalSandbox;
let medals: TableRef;
let scratchRoot: string;

beforeAll(async () => {
  useTempHome();
  scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-figures-"));
  sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot });
  // This process imports the server, so it is served: its operator allows the examples.
  setOperatorSettings({ tableRoots: [EXAMPLES] });
  medals = (await loadTable({ path: `${EXAMPLES}/olympics_2020_medals.csv` })).table;
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratchRoot, { recursive: true, force: true });
});

const FIGURE = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n";

/** The run folders the interpreter keeps (a run's, until Node has read its files; the parked child's). */
function runFolders(): string[] {
  return readdirSync(scratchRoot).flatMap((interpreter) =>
    readdirSync(path.join(scratchRoot, interpreter)).filter((run) => !run.endsWith(".in")),
  );
}

describe("figures of a run", () => {
  it("come back read, traced and saved as PNG and SVG in the artifact store", async () => {
    const result = await sandbox.execute({
      code: `${FIGURE}ax.bar(df["nation"], df["gold"])\nax.set_title("Gold")`,
      tables: [medals],
    });
    expect(result.ok, result.stderr).toBe(true);
    const [figure] = result.figures ?? [];
    expect(figure).toMatchObject({ id: "fig1", title: "Gold", current: true, derived: "yes" });
    const [png, svg] = figure?.files ?? [];
    expect(png?.format).toBe("png");
    expect(svg?.format).toBe("svg");
    expect(path.basename(png?.uri ?? "")).toBe(`${png?.sha256}.png`);
    expect(
      readFileSync(png?.uri ?? "")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(readFileSync(svg?.uri ?? "", "utf8")).toContain("<svg");
    expect(figure?.axes[0]?.readings.bar).toEqual([39, 38, 27, 22, 20, 17, 10, 10, 10, 10]);
    expect(figure?.lineage).toEqual([
      {
        table: "olympics_2020_medals",
        rows: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        columns: ["nation", "gold"],
      },
    ]);
    // The same figure is the same file: no date, fixed ids.
    const again = await sandbox.execute({
      code: `${FIGURE}ax.bar(df["nation"], df["gold"])\nax.set_title("Gold")`,
      tables: [medals],
      lineage: false,
    });
    expect(again.figures?.[0]?.files.map((f) => f.sha256)).toEqual(
      figure?.files.map((f) => f.sha256),
    );
    expect(again.figures?.[0]?.derived).toBe("unknown");
    // Released once read: only the folder of the child parked for the next request is left.
    await expect.poll(() => runFolders().length).toBeLessThanOrEqual(1);
  });

  it("are absent from a run that draws nothing", async () => {
    const result = await sandbox.execute({ code: "print(len(df))", tables: [medals] });
    expect(result.ok).toBe(true);
    expect(result.figures).toBeUndefined();
  });

  it("keep ten figures, the current one always among them", async () => {
    const code =
      "import matplotlib.pyplot as plt\nfor i in range(12):\n    plt.figure()\n    plt.bar(['a'], [i])";
    const result = await sandbox.execute({ code, tables: [], lineage: false });
    const figures = result.figures ?? [];
    expect(figures).toHaveLength(10);
    expect(figures.at(-1)).toMatchObject({ number: 12, current: true });
    expect(result.stderr).toContain("the code drew 12 figures; only 10 were kept");
  });

  it("refuse files the code made savefig write: no script reaches a browser", async () => {
    const code = [
      FIGURE.trimEnd(),
      "ax.bar(['a'], [1])",
      "import matplotlib.figure",
      "def forged(self, handle, format=None, **kw):",
      "    handle.write(b'<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>')",
      "matplotlib.figure.Figure.savefig = forged",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [], lineage: false });
    expect(result.figures?.[0]?.files).toEqual([]);
    expect(result.stderr).toMatch(/figure 1 \(png\) was refused: its file is not a PNG image/);
    expect(result.stderr).toMatch(/figure 1 \(svg\) was refused: the SVG holds script/);
  });
});

it("come back the same way from E2B (here a local fake of its SDK)", async () => {
  const fake = new FakeE2B();
  const e2b = await E2BSandbox.start({
    apiKey: "test-key",
    sdk: fake,
    backoffMs: 10,
    networkProbe: { host: "1.1.1.1", port: 80, answerMs: 500 },
  });
  try {
    const result = await e2b.execute({
      code: `${FIGURE}ax.bar(df["nation"], df["gold"])`,
      tables: [medals],
    });
    expect(result.ok, result.stderr).toBe(true);
    const [figure] = result.figures ?? [];
    expect(figure?.files.map((f) => f.format)).toEqual(["png", "svg"]);
    expect(figure?.axes[0]?.readings.bar).toEqual([39, 38, 27, 22, 20, 17, 10, 10, 10, 10]);
    expect(figure?.derived).toBe("yes");
  } finally {
    await e2b.close();
    fake.cleanup();
  }
});

describe("GET /artifacts/<name> on the API server", () => {
  it("serves a stored figure with headers that keep a browser from running anything", async () => {
    const result = await sandbox.execute({
      code: `${FIGURE}ax.bar(['a', 'b'], [1, 2])`,
      tables: [],
      lineage: false,
    });
    const svg = result.figures?.[0]?.files.find((f) => f.format === "svg");
    const response = await app.request(`/artifacts/${svg?.sha256}.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
    expect(await response.text()).toBe(readFileSync(svg?.uri ?? "", "utf8"));
  });

  it("serves no table, no unsafe SVG, no other name", async () => {
    const table = `${medals.sha256}.csv`;
    expect((await app.request(`/artifacts/${table}`)).status).toBe(404);
    const unsafe = await putArtifact('<svg xmlns="x"><script>alert(1)</script></svg>', "svg");
    expect(existsSync(unsafe.uri)).toBe(true);
    expect((await app.request(`/artifacts/${unsafe.sha256}.svg`)).status).toBe(404);
    expect((await app.request(`/artifacts/${"0".repeat(64)}.png`)).status).toBe(404);
    expect((await app.request("/artifacts/..%2Fkeys%2Fpickle-hmac.key")).status).toBe(404);
  });
});

describe("TableBench's chart scoring reads the sandbox's figures", () => {
  const example: EvalExample = {
    id: "chart-bar",
    dataset: "tablebench",
    question: "Draw a bar chart of the high temperatures.",
    tables: [
      {
        name: "table",
        columns: ["city", "high"],
        data: [
          ["a", 24],
          ["b", 30],
        ],
      },
    ],
    gold: "y_references = [[24, 30]]",
    category: "Visualization",
    subcategory: "ChartGeneration",
    chartType: "bar",
  };
  const code =
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(df['city'], df['high'])";

  it("marks the figure of the second run as the one plt.gca() reads", async () => {
    const result = await sandbox.execute({ code: chartScript(code, example), tables: [] });
    const figures = result.figures ?? [];
    expect(figures.map((f) => f.current)).toEqual([false, true]);
    expect(figures[1]?.axes[0]?.readings.bar).toEqual([24, 30]);
  });

  it("passes or fails by the values in the runner's result, not by a reading of its own", async () => {
    const runner = sandboxChartRunner(sandbox);
    expect(await judgeChart(code, example, runner)).toEqual({ ecr: true, verdict: true });
    // The same run, with the values the sandbox read changed: the verdict follows them.
    const shifted: ChartRunner = async (script, timeoutMs) => {
      const result = await runner(script, timeoutMs);
      const figures = result.figures?.map(
        (f): Figure => ({
          ...f,
          axes: f.axes.map((a) => ({ ...a, readings: { ...a.readings, bar: [24, 31] } })),
        }),
      );
      return { ...result, ...(figures ? { figures } : {}) };
    };
    expect(await judgeChart(code, example, shifted)).toEqual({ ecr: true, verdict: false });
    // No figure in the result: plt.gca() would have read an empty axes.
    const blind: ChartRunner = async (script, timeoutMs) => {
      const { figures: _, ...rest } = await runner(script, timeoutMs);
      return rest;
    };
    expect(await judgeChart(code, example, blind)).toEqual({ ecr: true, verdict: false });
  });
});
