import { answerFromOutput, lastMessage } from "./scripts.js";
import type { StubReply, StubRequest } from "./stub-openai.js";

/** Code a model might write for three questions of the sample; the sandbox computes the answers. */
export const KNOWN_CODE: [RegExp, string][] = [
  [
    /average number of tropical cyclones per season/,
    'avg = df["tropical cyclones"].mean()\nprint(round(avg, 2))',
  ],
  [
    /population of more than 40 million/,
    'n = int((df["population"] > 40_000_000).sum())\nprint(n)',
  ],
  [/greater than 0\.3 in the 2001-05/, 'n = int((df["2001 - 05"] > 0.3).sum())\nprint(n)'],
];

/**
 * A stand-in team for TableBench runs: it plans, counts the table's rows, and answers with
 * the number printed; chart questions get a bar chart of the first numeric column. Only the
 * three questions of KNOWN_CODE get code that answers them.
 */
export function tablebenchTeam(req: StubRequest): StubReply {
  if (req.role === "planner") return "<plan>\n1. Count the rows.\n2. Print the count.\n</plan>";
  if (req.role === "coder") {
    const prompt = lastMessage(req);
    const known = KNOWN_CODE.find(([question]) => question.test(prompt));
    if (known) return `\`\`\`python\n${known[1]}\n\`\`\``;
    // Only the question decides: table profiles often mention charts (music charts, say).
    const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? "";
    const chart = /draw|chart|plot/i.test(question);
    return chart
      ? "```python\nimport matplotlib.pyplot as plt\nnum = df.select_dtypes('number')\nplt.bar(range(len(num)), num.iloc[:, 0] if num.shape[1] else [0])\nprint(len(df))\n```"
      : "```python\nrows = len(df)\nprint(rows)\n```";
  }
  if (req.role === "answerer") return answerFromOutput(req);
  if (req.role === "reflector")
    return "Diagnosis: unclear.\nRoute: code\nImprovement:\n1. Check again.";
  return { status: 500, content: `no reply for ${req.role}` };
}
