import type { GraphNode } from "@langchain/langgraph";
import type { Reflection, Verdict } from "../blackboard/schemas.js";
import type { ReviewState, ReviewStateValue } from "../blackboard/state.js";
import { OPEN_PRIVACY } from "../tables/privacy.js";
import { ask, askOrFallBack } from "./llm.js";
import { numberLines, promptPrivacy, renderPlan } from "./prompts.js";
import { configurationOf, type NodeContext } from "./runtime.js";

export const REFLECTOR_SYSTEM = `# tableminds reflector
An answer to a question about tables was checked and rejected. You find out why and say
how the next try should differ.

You are given the question, the plan, the code that ran and its output, the answer, and
the checker's findings. Decide whether the plan was wrong (it misread the question, used
the wrong columns, filtered or grouped the wrong way) or whether the plan was sound and the
code or the reading of its output went wrong.

Reply in this form:
Diagnosis: <one or two sentences: what went wrong and where>
Route: plan | code
Improvement:
1. <a concrete change for the next try>
2. ...`;

/** The prompt: everything the reflector needs to see where the run went wrong. */
export function reflectorPrompt(
  state: Pick<ReviewStateValue, "question" | "plan" | "attempts" | "answer" | "reflections">,
  verdict: Verdict,
  privacy = OPEN_PRIVACY,
): string {
  const sections = [`Question: ${state.question}`];
  if (state.plan.length > 0) sections.push(`Plan:\n${renderPlan(state.plan)}`);
  const last = state.attempts.at(-1);
  if (last) {
    sections.push(`Code (${last.id}):\n\`\`\`python\n${numberLines(last.code)}\n\`\`\``);
    const result = last.result;
    if (result?.ok) sections.push(`Output:\n${privacy.output(result)}`);
    else if (result?.error) sections.push(`It failed: ${privacy.error(result.error, last.code)}`);
  }
  sections.push(`Answer: ${privacy.answer(state.answer?.final)}`);
  const scores = `type ${verdict.scores.type}/2, format ${verdict.scores.format}/2, grounding ${verdict.scores.grounding}/2`;
  const issues = privacy
    .notes(verdict.issues)
    .map((issue) => `- ${issue}`)
    .join("\n");
  sections.push(`Checker (${scores}):\n${issues || "- (no details)"}`);
  // A diagnosis no model wrote is the checker's notes again.
  const diagnoses = state.reflections.flatMap((r) =>
    r.byModel ? [r.diagnosis] : privacy.notes([r.diagnosis]),
  );
  if (diagnoses.length > 0) {
    const earlier = diagnoses.map((d, i) => `${i + 1}. ${d}`).join("\n");
    sections.push(`Earlier diagnoses (do not repeat what already failed):\n${earlier}`);
  }
  return sections.join("\n\n");
}

export interface ParsedReflection {
  diagnosis: string;
  route: Reflection["route"];
  improvement: string[];
}

const DIAGNOSIS = /^\W*diagnosis\W*:[\s*]*(.+)$/im;
const ROUTE = /^\W*route\W*:\W*(plan|planner|code|coder)\b/im;
const IMPROVEMENT = /^\W*improvements?\W*:/im;
const STEP = /^\s*(?:\d+[.)]|[-*•])\s+(.+)$/;

/**
 * The diagnosis, route and improvement steps of a reflector reply, or null when the reply
 * has no diagnosis. A missing route is decided from the verdict by `defaultRoute`.
 */
export function parseReflection(reply: string, verdict: Verdict): ParsedReflection | null {
  const diagnosis = DIAGNOSIS.exec(reply)?.[1]?.trim();
  if (!diagnosis) return null;
  const said = ROUTE.exec(reply)?.[1]?.toLowerCase();
  const route = said ? (said.startsWith("plan") ? "planner" : "coder") : defaultRoute(verdict);
  const at = reply.search(IMPROVEMENT);
  const improvement =
    at < 0
      ? []
      : reply
          .slice(at)
          .split("\n")
          .slice(1)
          .flatMap((line) => STEP.exec(line)?.[1]?.trim() ?? []);
  return { diagnosis, route, improvement };
}

/**
 * Where to go back when nobody said: an answer of the wrong type means the question was
 * misread, which is the plan's fault; anything else is the code's or its reading's.
 */
export function defaultRoute(verdict: Verdict): Reflection["route"] {
  return verdict.scores.type === 0 ? "planner" : "coder";
}

/** A reflection built from the verdict alone, for when the model's reply is unusable. */
export function reflectionFromVerdict(verdict: Verdict): ParsedReflection {
  return {
    diagnosis: `The checker rejected the answer: ${verdict.issues.join("; ") || "no reason given"}.`,
    route: defaultRoute(verdict),
    improvement: verdict.issues.map((issue) => `Fix this: ${issue}`),
  };
}

/**
 * Diagnoses the failed verdict and records where the run goes next. A failed call or an
 * unusable reply does not end the run: the checker's own findings become the diagnosis.
 */
export const reflector = (async (state, runtime) => {
  const verdict = state.verdict;
  if (!verdict) throw new Error("reflector: there is no verdict; the checker must run before it");
  const config = configurationOf(runtime);
  const privacy = await promptPrivacy(state, config);
  const reply = await askOrFallBack(() =>
    ask(
      "reflector",
      REFLECTOR_SYSTEM,
      reflectorPrompt(state, verdict, privacy),
      config,
      runtime?.signal,
      { privacy },
    ),
  );
  const parsed = reply ? parseReflection(reply.text, verdict) : null;
  const reflection: Reflection = {
    id: `r${state.reflections.length + 1}`,
    ...(parsed ?? reflectionFromVerdict(verdict)),
    verdict,
    afterAttempts: state.attempts.length,
    byModel: parsed !== null,
  };
  return { reflections: [reflection], budget: reply?.budget ?? {} };
}) satisfies GraphNode<typeof ReviewState, NodeContext>;
