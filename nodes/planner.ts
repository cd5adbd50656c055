import type { GraphNode } from "@langchain/langgraph";
import type { SolveState } from "../blackboard/state.js";
import { coderDialect, QUERY_PLAN } from "./dialect.js";
import { emit } from "./events.js";
import { ask, ReplyParseError } from "./llm.js";
import {
  promptPrivacy,
  renderConversation,
  renderMemories,
  renderReflection,
  renderTableNames,
  renderTables,
} from "./prompts.js";
import { configurationOf, type NodeContext } from "./runtime.js";

export const PLANNER_SYSTEM = `# tableminds planner
You plan the analysis that answers a question about tables. A coder will turn your plan
into pandas code and run it, so each step must be concrete: which columns to use, how to
filter, group, sort or compute, and what value to print at the end.

Reply with the plan only, inside <plan></plan>, as numbered steps:
<plan>
1. ...
2. ...
</plan>
Keep it to the steps needed (usually 2 to 6). Name columns exactly as the profile spells them.`;

export function plannerPrompt(
  question: string,
  profiles: string[],
  tableNames: string,
  context: { conversation?: string; memories?: string; reflection?: string } = {},
): string {
  return [
    profiles.join("\n\n"),
    tableNames,
    context.conversation,
    context.memories,
    context.reflection,
    `Question: ${question}`,
  ]
    .filter(Boolean)
    .join("\n\n");
}

const STEP = /^\s*(?:step\s*)?(\d+)\s*[.):-]\s*(.+)$/i;

/**
 * Numbered steps from a planner reply. Takes the <plan> block when there is one,
 * else numbered lines anywhere, else the bullet lines; fails when none of these exist.
 */
export function parsePlan(reply: string): string[] {
  const tagged = /<plan>([\s\S]*?)(?:<\/plan>|$)/i.exec(reply);
  const body = tagged?.[1] ?? reply;
  const lines = body.split("\n").map((line) => line.trim());
  const numbered = lines.flatMap((line) => {
    const match = STEP.exec(line.replace(/^[*#\s]+/, ""));
    return match?.[2] ? [match[2].replace(/^[*\s]+|[*\s]+$/g, "")] : [];
  });
  if (numbered.length > 0) return numbered;
  const bullets = lines.flatMap((line) => {
    const match = /^[-*•]\s+(.+)$/.exec(line);
    return match?.[1] ? [match[1].trim()] : [];
  });
  if (bullets.length > 0) return bullets;
  if (tagged) {
    const plain = lines.filter(Boolean);
    if (plain.length > 0) return plain;
  }
  throw new ReplyParseError("planner", "plan (numbered steps or a <plan> block)", reply);
}

export const planner = (async (state, runtime) => {
  const config = configurationOf(runtime);
  if (coderDialect(config, state.tables) === "query") {
    emit(runtime, { event: "plan", steps: [QUERY_PLAN] });
    return { plan: [QUERY_PLAN] };
  }
  const privacy = await promptPrivacy(state, config);
  const profiles = await renderTables(state.tables, state.question, config);
  const prompt = plannerPrompt(state.question, profiles, renderTableNames(state.tables), {
    conversation: renderConversation(state.turns, privacy),
    memories: renderMemories(state.memories, privacy),
    reflection: renderReflection(state.reflections, privacy),
  });
  const reply = await ask("planner", PLANNER_SYSTEM, prompt, config, runtime?.signal, {
    privacy,
  });
  const plan = parsePlan(reply.text);
  emit(runtime, { event: "plan", steps: plan });
  return { plan, budget: reply.budget };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
