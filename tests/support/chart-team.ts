import { MEDALS_PLAN } from "./scripts.js";
import type { StubReply, StubRequest } from "./stub-openai.js";

/** A chart question over the medals example (examples/olympics_2020_medals.csv). */
export const CHART_QUESTION = "Draw a bar chart of the gold medals each nation won.";

const fenced = (lines: string[]) => ["```python", ...lines, "```"].join("\n");

const FIGURE = ["import matplotlib.pyplot as plt", "fig, ax = plt.subplots()"];
const SHOW = ['ax.set_title("Gold medals")', "plt.show()"];

/** Chart code the coder may write: the right chart, and the ways a chart goes wrong. */
export const CHART_CODE = {
  /** Gold per nation, from the table. */
  right: fenced([...FIGURE, 'ax.bar(df["nation"], df["gold"])', ...SHOW]),
  /** The right numbers, typed into the code over the table's names. */
  typedIn: fenced([
    ...FIGURE,
    'ax.bar(df["nation"], [39, 38, 27, 22, 20, 17, 10, 10, 10, 10])',
    ...SHOW,
  ]),
  /** The table's values but one, which is typed in. */
  oneTypedIn: fenced([
    ...FIGURE,
    'gold = df["gold"].tolist()',
    "gold[0] = 50",
    'ax.bar(df["nation"], gold)',
    ...SHOW,
  ]),
  /** Another column than the one asked for. */
  silver: fenced([...FIGURE, 'ax.bar(df["nation"], df["silver"])', ...SHOW]),
  /** Gold values out of their rows: sorted apart from the names. */
  misplaced: fenced([...FIGURE, 'ax.bar(df["nation"], df["gold"].sort_values().values)', ...SHOW]),
  /** No figure at all: the values printed. */
  printed: fenced(['print(df[["nation", "gold"]].to_string(index=False))']),
} as const;

/** Planner, coder and answerer for the chart question; the coder writes `code`. */
export function chartTeam(code: string) {
  return (req: StubRequest): StubReply => {
    if (req.role === "planner") return MEDALS_PLAN;
    if (req.role === "coder") return code;
    if (req.role === "answerer") {
      return "Final Answer: a bar chart of the gold medals of each nation\nEvidence: a1:fig1";
    }
    return { status: 500, content: `no reply scripted for role ${req.role}` };
  };
}
