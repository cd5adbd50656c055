import type { Budget } from "../blackboard/schemas.js";
import { callModel, ModelCallError } from "../models/chat.js";
import { type Role, resolveModel } from "../models/config.js";
import type { ReplyGrammar } from "../models/local-grammar.js";
import type { Configuration } from "../settings/configuration.js";
import { ROLES, roleModelField, roleTemperatureField } from "../settings/roles.js";
import { atLeastAsStrict, type PromptPrivacy } from "../tables/privacy.js";

export interface NodeReply {
  text: string;
  budget: Partial<Budget>;
}

/** The model of every role, as the configuration names them, for callModel. */
export function modelsOf(config: Configuration) {
  return {
    model: config.model,
    roleModels: Object.fromEntries(ROLES.map((role) => [role, config[roleModelField(role)]])),
  };
}

/** A role's own temperature when it has one (planner, coder, answerer), else the run's. */
export function temperatureOf(role: Role, config: Configuration): number {
  const own = roleTemperatureField(role);
  return (own && config[own]) ?? config.temperature;
}

/** What a trace tells of a model call beside its role, e.g. the attempt a coder writes. */
export type TraceMetadata = Record<string, string | number>;

export interface AskOptions {
  metadata?: TraceMetadata;
  /**
   * What the prompt may show of the tables (tables/privacy.ts): it scrubs the prompt
   * before it leaves. Required when the run's `privacy` is not `off`.
   */
  privacy?: PromptPrivacy;
  /**
   * Who speaks, when not the role itself: an agent that uses the role's model (the decomposer
   * the planner's, the sql worker the coder's). An embedded model answers in its grammar.
   */
  speaker?: string;
  /** The grammar an embedded model answers in, when the speaker builds its own. */
  grammar?: ReplyGrammar;
}

/** A prompt that would leave without the privacy the run asks for. */
export class PrivacyError extends Error {
  override name = "PrivacyError";
}

let localNoticeGiven = false;

/** Once per process: a privacy mode with the embedded model, which sends nothing anywhere. */
function noticeLocalPrivacy(role: Role, config: Configuration): void {
  if (localNoticeGiven) return;
  try {
    if (!resolveModel(role, modelsOf(config)).local) return;
  } catch {
    return; // callModel reports a model that cannot be resolved
  }
  localNoticeGiven = true;
  process.emitWarning(
    `privacy ${config.privacy}: the ${role} runs on the embedded local model, which sends nothing off this machine; the mode applies anyway`,
    "TablemindsWarning",
  );
}

/** The user prompt as it may leave under the run's privacy mode. */
function guarded(role: Role, user: string, config: Configuration, privacy?: PromptPrivacy): string {
  if (config.privacy === "off") return privacy ? privacy.scrub(user) : user;
  if (!privacy || !atLeastAsStrict(privacy.mode, config.privacy)) {
    throw new PrivacyError(
      `the ${role}'s prompt was built without the run's privacy (${config.privacy}); it was not sent`,
    );
  }
  noticeLocalPrivacy(role, config);
  return privacy.scrub(user);
}

/**
 * One system + user exchange with the model of `role`, with its cost for the budget. In a
 * trace the call is named by its role, tagged `model` and carries `metadata` with its role;
 * it inherits the run's own (graph, dataset, question id) and LangGraph's (node, step).
 * Errors and slow-call notices name the agent the system prompt speaks for (the decomposer
 * and the sql worker use the planner's and the coder's models). Under a privacy mode the prompt
 * leaves scrubbed by `options.privacy`, and not at all without it.
 */
export async function ask(
  role: Role,
  system: string,
  user: string,
  config: Configuration,
  signal?: AbortSignal,
  options: AskOptions = {},
): Promise<NodeReply> {
  const { metadata = {}, privacy, speaker = role, grammar } = options;
  const reply = await callModel(
    role,
    [
      { role: "system", content: system },
      { role: "user", content: guarded(role, user, config, privacy) },
    ],
    {
      ...modelsOf(config),
      temperature: temperatureOf(role, config),
      seed: config.seed,
      timeoutMs: config.llmTimeoutMs,
      maxRetries: config.llmMaxRetries,
      streaming: config.streaming,
    },
    {
      signal,
      replayCache: config.replayCache,
      runName: role,
      tags: ["model"],
      metadata: { ...metadata, role },
      speaker,
      grammar,
    },
  );
  return {
    text: reply.text,
    budget: {
      llmCalls: 1,
      cachedCalls: reply.cached ? 1 : 0,
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      llmMs: reply.ms,
    },
  };
}

/**
 * Raised when a model reply holds nothing a node can use; the message says what was missing and
 * who replied: a role, or an agent using a role's model (decomposer, sql, calc, composer).
 */
export class ReplyParseError extends Error {
  constructor(
    readonly role: string,
    readonly expected: string,
    readonly reply: string,
  ) {
    const preview = reply.length > 200 ? `${reply.slice(0, 200)}...` : reply;
    super(`the ${role} reply has no ${expected}; it was: ${JSON.stringify(preview)}`);
    this.name = "ReplyParseError";
  }
}

/**
 * For advisory roles (checker, reflector, archiver), whose failure must not lose an answer
 * already found: the reply, or null when the model kept failing (after the client's own
 * retries) so the caller falls back to what it can do without one.
 */
export async function askOrFallBack(call: () => Promise<NodeReply>): Promise<NodeReply | null> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ModelCallError) {
      process.emitWarning(`${error.message}; going on without this reply`, "TablemindsWarning");
      return null;
    }
    throw error;
  }
}
