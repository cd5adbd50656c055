import { existsSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { CHART_CODE, CHART_QUESTION, chartTeam } from "../support/chart-team.js";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The example's nations and gold medals, read from the file itself. */
function goldByNation(): [string, number][] {
  const [header = "", ...rows] = readFileSync(TABLE, "utf8").trim().split("\n");
  const columns = header.split(",");
  return rows.map((line) => {
    const cells = line.split(",");
    return [cells[columns.indexOf("nation")] ?? "", Number(cells[columns.indexOf("gold")])];
  });
}

interface Listed {
  id: string;
  kind: string;
  derived: string;
  png: string;
  svg: string;
}

interface Point {
  label: string;
  value: number;
  derived: string;
  lineage: { table: string; rows: number[]; columns: string[] }[];
}

/**
 * A chart question end to end through `tableminds ask` with a scripted team: the sandbox saves
 * the figure as PNG and SVG, `--json` lists them, the plotted values are the table's, and the
 * check passes; the same chart with its numbers typed into the code fails it.
 */
describe("ask answers a chart question with the figure", () => {
  const stubs: StubServer[] = [];

  afterAll(async () => {
    await Promise.all(stubs.map((s) => s.close()));
  });

  async function ask(code: string, more: string[] = []) {
    const stub = await startStubOpenAI({ respond: chartTeam(code) });
    stubs.push(stub);
    const args = ["ask", TABLE, CHART_QUESTION, "--no-memory", "--max-reflections", "0", ...more];
    return runCli(args, stubEnv(stub.url), 120_000);
  }

  it("saves the figure, lists its files in --json, plots the table's values and passes", async () => {
    const result = await ask(CHART_CODE.right, ["--json"]);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout);
    const figures = json.figures as Listed[];
    expect(figures).toHaveLength(1);
    const [figure] = figures;
    expect(figure).toMatchObject({ id: "a1:fig1", kind: "bar", derived: "yes" });
    expect(
      readFileSync(figure?.png ?? "")
        .subarray(0, 8)
        .equals(PNG),
    ).toBe(true);
    expect(readFileSync(figure?.svg ?? "", "utf8")).toMatch(/^<\?xml[\s\S]*<svg[\s>]/);

    const drawn = json.attempts[0].result.figures[0];
    const points = drawn.axes[0].points as Point[];
    expect(points.map((p) => [p.label, p.value])).toEqual(goldByNation());
    // Each bar rests on its own row of the table: its name and its gold cell.
    points.forEach((point, row) => {
      expect(point.derived).toBe("yes");
      expect(point.lineage[0]).toMatchObject({ rows: [row], columns: ["nation", "gold"] });
    });
    expect(drawn.axes[0].readings.bar).toEqual(goldByNation().map(([, gold]) => gold));

    expect(json.verdict).toMatchObject({ pass: true, support: "derived" });
    expect(json.verdict.claims).toHaveLength(points.length);
    const ids = (json.evidence as { id: string }[]).map((e) => e.id);
    expect(ids).toContain("a1:fig1");
    expect(ids).toContain("olympics_2020_medals:r0:gold");
  });

  it("fails the same chart with its numbers typed in, and still prints where its files are", async () => {
    const result = await ask(CHART_CODE.typedIn);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/^Not sure\. Best candidate: /m);
    expect(result.stdout).toMatch(/^Check: FAILED/m);
    expect(result.stdout).toMatch(/a1:fig1 plots values typed into the code/);
    const png = /^ {6}PNG (\S+\.png)$/m.exec(result.stdout)?.[1] ?? "";
    const svg = /^ {6}SVG (\S+\.svg)$/m.exec(result.stdout)?.[1] ?? "";
    expect(existsSync(png) && existsSync(svg)).toBe(true);
    expect(result.stdout).toMatch(/its values do not change with the table/);
  });
});
