import { readFileSync } from "node:fs";
import { EXAMPLES } from "./env.js";
import { answerFromOutput, lastMessage, medalsTeam } from "./scripts.js";
import type { StubReply, StubRequest } from "./stub-openai.js";

/** A follow-up to MEDALS_QUESTION, which means nothing without it. */
export const FOLLOW_UP = "And for silver?";

/**
 * The follow-up's code: it reads the source table by its name (with a table left by the first
 * question beside it there is no `df`) and uses `by_nation`, which only the first question's
 * code made: it fails unless that table was carried over.
 */
export const SILVER_CODE = [
  "```python",
  'silver = olympics_2020_medals[["nation", "silver"]]',
  'print("nations as before:", len(by_nation))',
  'total = silver["silver"].sum()',
  "print(total)",
  "```",
].join("\n");

/** The silver column's sum, read from the example table here, not by the code under test. */
export function silverTotal(): string {
  const [header, ...rows] = readFileSync(`${EXAMPLES}/olympics_2020_medals.csv`, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split(","));
  const at = header?.indexOf("silver") ?? -1;
  return String(rows.reduce((sum, row) => sum + Number(row[at]), 0));
}

/**
 * The medals team, which on a question about silver plans and codes for silver: a planner or
 * coder that reads "silver" in the question line (not merely in the conversation) answers it.
 */
export function followUpTeam() {
  const team = medalsTeam();
  return (req: StubRequest): StubReply => {
    const asked = /^Question: (.*)$/m.exec(lastMessage(req))?.[1] ?? "";
    const silver = asked.includes("silver");
    if (req.role === "planner" && silver) {
      return "<plan>\n1. Keep the nation and silver columns.\n2. Sum silver and print it.\n</plan>";
    }
    if (req.role === "coder" && silver) return SILVER_CODE;
    if (req.role === "answerer") return answerFromOutput(req);
    return team(req);
  };
}

/** The text of the last message of each request by `role`, from index `from` on. */
export function promptsOf(requests: StubRequest[], role: string, from = 0): string[] {
  return requests
    .slice(from)
    .filter((r) => r.role === role)
    .map(lastMessage);
}
