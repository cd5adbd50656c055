import type { GraphNode } from "@langchain/langgraph";
import { lastSuccessful } from "../../blackboard/attempts.js";
import { winnerTrajectory } from "../../blackboard/branches.js";
import { addBudget, EMPTY_BUDGET } from "../../blackboard/reducers.js";
import type { Ballot, Branch } from "../../blackboard/schemas.js";
import { ask, askOrFallBack, ReplyParseError } from "../../nodes/llm.js";
import { promptPrivacy } from "../../nodes/prompts.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import { OPEN_PRIVACY, type PromptPrivacy } from "../../tables/privacy.js";
import type { MomState, MomStateValue } from "./state.js";

export const JUDGE_SYSTEM = `# tableminds judge
Two answers to one question about tables were reached by different analyses. You decide which
answer is better: more accurate, better supported by what its code printed, and closer to what
the question asks. Judge the substance, not the length or the style.

Reply with one line and nothing else:
Winner: A
or
Winner: B`;

function side(label: string, branch: Branch, privacy: PromptPrivacy): string {
  const result = lastSuccessful(branch.attempts)?.result;
  const run = result ? privacy.output(result).slice(0, 1500) : "";
  const answer =
    privacy.mode === "off" ? (branch.answer?.final ?? "") : privacy.answer(branch.answer?.final);
  return [
    `Answer ${label}: ${answer}`,
    `What its code printed:\n${run || "(no code ran successfully)"}`,
  ].join("\n");
}

export function judgePrompt(
  question: string,
  a: Branch,
  b: Branch,
  privacy: PromptPrivacy = OPEN_PRIVACY,
): string {
  return [`Question: ${question}`, side("A", a, privacy), side("B", b, privacy)].join("\n\n");
}

/** "A" or "B" from a judge's reply; a reply naming neither fails with a ReplyParseError. */
export function parseJudgement(reply: string): "A" | "B" {
  const marked = /winner\W*\s*[:=-]?\s*\**\s*(?:answer\s+)?([AB])\b/i.exec(reply)?.[1];
  const bare = /^\W*([AB])\W*$/i.exec(reply.trim())?.[1];
  const found = (marked ?? bare)?.toUpperCase();
  if (found === "A" || found === "B") return found;
  throw new ReplyParseError("checker", '"Winner: A" or "Winner: B" line', reply);
}

/** The one branch standing for each distinct answer: the first that gave it. */
function contenders(state: Pick<MomStateValue, "branches" | "ballot">): Branch[] {
  return (state.ballot?.tally ?? []).flatMap((entry) => {
    const branch = state.branches.find((b) => b.id === entry.branches[0]);
    return branch ? [branch] : [];
  });
}

/**
 * A knockout among the distinct answers, in the order they were first seen: each round pairs
 * them off and a model picks the better of each pair; an odd one out goes through. A match the
 * model cannot settle (no usable reply, or no reply) goes to the answer first seen.
 */
export const judge = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const ballot = state.ballot;
  if (!ballot) throw new Error("judge: there is no ballot; the vote must run before it");
  const privacy = await promptPrivacy(state, config);
  let round = contenders(state);
  const matches: Ballot["matches"] = [];
  let budget = EMPTY_BUDGET;
  while (round.length > 1) {
    const pairs = Array.from({ length: Math.ceil(round.length / 2) }, (_, i) =>
      round.slice(2 * i, 2 * i + 2),
    );
    const played = await Promise.all(
      pairs.map(async ([a, b]) => {
        if (!a || !b) return { winner: a as Branch, reply: null };
        const reply = await askOrFallBack(() =>
          ask(
            "checker",
            JUDGE_SYSTEM,
            judgePrompt(state.question, a, b, privacy),
            config,
            runtime?.signal,
            { privacy, speaker: "judge" },
          ),
        );
        const winner = (reply ? pickOrFirst(reply.text) : "A") === "A" ? a : b;
        return { winner, reply, match: { a: a.id, b: b.id, winner: winner.id } };
      }),
    );
    for (const { reply, match } of played) {
      if (reply) budget = addBudget(budget, reply.budget);
      if (match) matches.push(match);
    }
    round = played.map((p) => p.winner);
  }
  const winner = round[0]?.id ?? ballot.winner;
  const answer = state.branches.find((b) => b.id === winner)?.answer?.final ?? ballot.answer;
  return {
    ballot: { ...ballot, method: "judge" as const, winner, answer, matches },
    ...winnerTrajectory(state, winner),
    budget,
  };
}) satisfies GraphNode<typeof MomState, NodeContext>;

function pickOrFirst(reply: string): "A" | "B" {
  try {
    return parseJudgement(reply);
  } catch (error) {
    if (!(error instanceof ReplyParseError)) throw error;
    process.emitWarning(
      `${error.message}; the answer seen first goes through`,
      "TablemindsWarning",
    );
    return "A";
  }
}
