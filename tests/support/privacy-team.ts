import { answerFromOutput, lastMessage } from "./scripts.js";
import type { StubReply, StubRequest } from "./stub-openai.js";
import { tablebenchTeam } from "./tablebench-team.js";

/** The id a prompt asks the answerer to cite when the code's result stays home, if it does. */
export function keptResultId(prompt: string): string | null {
  return /e\.g\. "Final Answer: \[([^\]]+)\]"/.exec(prompt)?.[1] ?? null;
}

/**
 * An answerer as a model that follows the privacy modes' instruction: when the code's result
 * stays on this machine it answers with the result's id (filled in at home), else it reads the
 * last number printed, as `answerFromOutput` does.
 */
export function citingAnswerer(req: StubRequest): string {
  const kept = keptResultId(lastMessage(req));
  return kept ? `Final Answer: [${kept}]\nEvidence: ${kept}` : answerFromOutput(req);
}

/** The scripted TableBench team with an answerer that cites a result it cannot see. */
export function citingTablebenchTeam(req: StubRequest): StubReply {
  return req.role === "answerer" ? citingAnswerer(req) : tablebenchTeam(req);
}
