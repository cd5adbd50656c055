import type { StubReply, StubRequest } from "./stub-openai.js";

/** A scripted team that answers the medals total question correctly, from real output. */
export const MEDALS_QUESTION = "How many gold medals did these ten nations win in total?";

export const MEDALS_PLAN =
  "<plan>\n1. Keep the nation and gold columns.\n2. Sum the gold column and print it.\n</plan>";

export const MEDALS_CODE = [
  "```python",
  'by_nation = df[["nation", "gold"]]',
  'total = by_nation["gold"].sum()',
  'print("nations:", len(by_nation))',
  "print(total)",
  "```",
].join("\n");

export function lastMessage(req: StubRequest): string {
  return String(req.messages.at(-1)?.content ?? "");
}

/**
 * The answerer reads the last number printed in its prompt, as a model would, and
 * cites the result ids that show it: the answer comes from the sandbox, not the script.
 */
export function answerFromOutput(req: StubRequest): string {
  const prompt = lastMessage(req);
  const output = /Output:\n([\s\S]*?)(?:\n\n|$)/.exec(prompt)?.[1] ?? "";
  const last = (output.match(/-?\d+(?:\.\d+)?/g) ?? []).at(-1) ?? "unknown";
  const cited = [...prompt.matchAll(/^\[([^\]]+)\] code line \d+: (\S+)$/gm)]
    .filter((m) => m[2] === last)
    .map((m) => m[1]);
  return `The code printed the total.\nFinal Answer: ${last}\nEvidence: ${cited.join(", ")}`;
}

/** Planner, coder and answerer replies for the medals question; `coder` may be overridden. */
export function medalsTeam(coder: (n: number) => StubReply = () => MEDALS_CODE) {
  let coderCalls = 0;
  return (req: StubRequest): StubReply => {
    if (req.role === "planner") return MEDALS_PLAN;
    if (req.role === "coder") return coder(coderCalls++);
    if (req.role === "answerer") return answerFromOutput(req);
    return { status: 500, content: `no reply scripted for role ${req.role}` };
  };
}

/**
 * The medals team under the orchestrator: the decomposer gives the whole question to pandas and
 * sql side by side, and sql sums the gold column, so the two workers agree.
 */
export function orchestratedMedalsTeam(table = "olympics_2020_medals") {
  const team = medalsTeam();
  return (req: StubRequest): StubReply => {
    if (req.role === "decomposer") {
      return JSON.stringify({
        subtasks: [{ id: "s1", task: MEDALS_QUESTION, workers: ["pandas", "sql"] }],
      });
    }
    if (req.role === "sql") return `\`\`\`sql\nSELECT sum(gold) AS total FROM ${table}\n\`\`\``;
    return team(req);
  };
}
