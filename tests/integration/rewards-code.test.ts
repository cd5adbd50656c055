import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { scoreReward } from "../../training/rewards/index.js";
import { OPERATION_LABELS, operationLabels } from "../../training/rewards/operations.js";

/* Operation labels and code rewards through the real local sandbox. */
afterAll(() => closeSandboxes());

const labels = async (code: string) => operationLabels(code, await getSandbox("local"));

describe("operation labels, read by Python's ast in the sandbox", () => {
  it("labels building, selecting, aggregating and printing", async () => {
    const code = "df = pd.DataFrame(rows, columns=cols)\nprint(df['sales'].sum())";
    expect(await labels(code)).toEqual([
      "aggregate_sum",
      "assign_column_names",
      "create_dataframe",
      "print_result",
      "select_column",
    ]);
  });

  it("labels filters, sorting and row picks", async () => {
    const code = "top = df[df['year'] > 2000].sort_values('sales')\nprint(top.iloc[0])";
    expect(await labels(code)).toEqual([
      "filter_row_by_condition",
      "filter_row_by_value",
      "print_result",
      "select_column",
      "select_top_row",
      "sort_by_column",
    ]);
  });

  it("labels cleaning, grouping, answers and f-strings", async () => {
    const code = [
      "df['x'] = pd.to_numeric(df['x'], errors='coerce')",
      "result = df.groupby('g')['x'].mean()",
      'print(f"{result}")',
    ].join("\n");
    expect(await labels(code)).toEqual([
      "aggregate_mean",
      "assign_answer_text",
      "convert_to_numeric",
      "format_output",
      "groupby",
      "handle_nulls",
      "print_result",
      "select_column",
    ]);
  });

  it("labels casts, differences and column comparisons; lists and -1 as the release reads them", async () => {
    const code = [
      "a = df[['a', 'b']]",
      "b = a.iloc[-1]",
      "same = df['a'] == df['b']",
      "print(int(b['a']) - float(b['b']))",
    ].join("\n");
    // The release takes only literal keys: a list is not one, nor -1 (a unary minus), so
    // neither select_columns nor select_bottom_row comes out.
    expect(await labels(code)).toEqual([
      "compare_columns",
      "compute_difference",
      "convert_to_float",
      "convert_to_int",
      "print_result",
      "select_column",
    ]);
  });

  it("gives code that does not parse no operations, and names only known labels", async () => {
    expect(await labels("print(df['a'")).toEqual([]);
    expect(await labels("")).toEqual([]);
    expect(OPERATION_LABELS.length).toBeGreaterThanOrEqual(25);
  });

  it("parses the code without running it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "rewards-ops-"));
    const marker = path.join(dir, "ran");
    try {
      const code = `open(${JSON.stringify(marker)}, "w").write("x")\nprint("\\u00e9 \\"q\\" '''")`;
      expect(await labels(code)).toEqual(["print_result"]);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const block = (code: string) => `Here is the code:\n\`\`\`python\n${code}\n\`\`\``;

describe("code rewards", () => {
  it("give 1 to a reply that is the pseudo-gold code, in both presets", async () => {
    for (const preset of ["paper", "release"] as const) {
      const scored = await scoreReward(preset, "code", {
        response: block("print(6)"),
        reference: "print(6)",
      });
      expect(scored.parts).toEqual({ format: 0.1, executes: 0.2, operations: 0.2, output: 0.5 });
    }
  });

  it("give nothing without exactly one python block", async () => {
    for (const preset of ["paper", "release"] as const) {
      const scored = await scoreReward(preset, "code", {
        response: "print(6)",
        reference: "print(6)",
      });
      expect(scored.reward).toBe(0);
    }
  });

  it("do not count a run that raised as executed", async () => {
    for (const preset of ["paper", "release"] as const) {
      const scored = await scoreReward(preset, "code", {
        response: block("print(1/0)"),
        reference: "print(6)",
      });
      expect(scored.parts).toEqual({ format: 0.1, executes: 0, operations: 0.2, output: 0 });
    }
  });

  it("release: output containing 'Error' does not execute, even when the run succeeded", async () => {
    const response = block('print("Error: none found")');
    const release = await scoreReward("release", "code", { response, reference: "print(6)" });
    const paper = await scoreReward("paper", "code", { response, reference: "print(6)" });
    expect(release.parts.executes).toBe(0);
    expect(paper.parts.executes).toBe(0.2);
  });

  it("score the printed output by BLEU: raw in paper, SQuAD-normalized in release", async () => {
    const sample = { response: block('print("The total is 6")'), reference: 'print("total 6")' };
    const paper = await scoreReward("paper", "code", sample);
    // Tokens "The total is 6" against "total 6": p = 2/4, then method4 for the three empty
    // orders (c = 4): ln4/(2*5)/3, ln4/(4*5)/2, ln4/(8*5)/1; c > r so BP = 1.
    const l4 = Math.log(4);
    const paperBleu = ((2 / 4) * (l4 / 30) * (l4 / 40) * (l4 / 40)) ** 0.25;
    expect(paper.parts.output).toBeCloseTo(0.5 * paperBleu, 14);
    expect(paper.reward).toBeCloseTo(0.5 + 0.5 * paperBleu, 14);
    // Normalized: "total is 6" against "total 6": p = 2/3, ln3/(2*5)/2, ln3/(4*5)/1, ln3/(8*5)/1.
    const release = await scoreReward("release", "code", sample);
    const l3 = Math.log(3);
    const releaseBleu = ((2 / 3) * (l3 / 20) * (l3 / 20) * (l3 / 40)) ** 0.25;
    expect(release.parts.output).toBeCloseTo(0.5 * releaseBleu, 14);
  });

  it("score partial operation overlap by F1", async () => {
    // {create_dataframe, select_column, aggregate_sum, print_result} against {print_result}:
    // P = 1/4, R = 1, F1 = 2 * (1/4) / (5/4) = 0.4.
    const scored = await scoreReward("paper", "code", {
      response: block("import pandas as pd\ns = pd.DataFrame({'a': [1, 5]})['a'].sum()\nprint(6)"),
      reference: "print(6)",
    });
    expect(scored.parts.operations).toBeCloseTo(0.2 * 0.4, 15);
  });
});
