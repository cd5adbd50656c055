import type { Callbacks } from "@langchain/core/callbacks/manager";
import {
  type AIMessageChunk,
  type BaseMessageLike,
  coerceMessageLikeToMessage,
  type UsageMetadata,
} from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { operatorSettings } from "../settings/operator.js";
import { BoundedCache } from "../storage/bounded-cache.js";
import { hostOf, trackModelCall } from "./activity.js";
import { recordLocalCall } from "./audit.js";
import {
  type Env,
  type ModelSettings,
  OPENAI_DEFAULT_BASE_URL,
  parseModelSettings,
  type ResolvedModel,
  type Role,
  resolveModel,
} from "./config.js";
import {
  describeCause,
  EmptyReplyError,
  ModelCallError,
  NotChatCompletionError,
  statusOf,
} from "./errors.js";
import { type CallRecord, guardedFetch, notChatCompletion, recordingCall } from "./fetch.js";
import { ChatLocalModel } from "./local-chat.js";
import type { ReplyGrammar } from "./local-grammar.js";
import { ReplayCache, replayCacheAt } from "./replay-cache.js";
import { onFailedModelAttempt } from "./retry.js";

export { isEndpointFailure, ModelCallError } from "./errors.js";

export interface ModelReply {
  text: string;
  promptTokens: number;
  completionTokens: number;
  /** Wall-clock time of the call, retries and backoff included. */
  ms: number;
  model: string;
  /** True when the reply came from the replay cache, with no request made. */
  cached?: boolean;
}

export interface CallModelOptions {
  signal?: AbortSignal;
  callbacks?: Callbacks;
  /** A replay cache file (else TABLEMINDS_REPLAY_CACHE): a repeated call is answered from it. */
  replayCache?: string;
  /** How the call shows in a trace (LangSmith): its run's name, tags and metadata. */
  runName?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /**
   * Who asks, for errors and slow-call notices, when not the role itself: an agent that uses
   * the role's model (the decomposer the planner's, the sql worker the coder's).
   */
  speaker?: string;
  /** The grammar an embedded model answers in, when the speaker builds its own. */
  grammar?: ReplyGrammar;
}

const MAX_CACHED_MODELS = 64;
const chatModels = new BoundedCache<ChatOpenAI>(MAX_CACHED_MODELS);
const localModels = new BoundedCache<ChatLocalModel>(MAX_CACHED_MODELS);

/** A remote OpenAI-compatible client, or an embedded GGUF model (`local:` specs). */
type ChatClient = ChatOpenAI | ChatLocalModel;

/**
 * The ChatOpenAI client for `role`, shared by all calls with the same resolved settings.
 * Retries (429, 5xx, timeouts, dropped connections; never an endpoint that cannot work: see
 * retry.ts) are ChatOpenAI's own, with exponential backoff from 1 s; the OpenAI SDK underneath
 * does not retry.
 *
 * `settings.streaming` does not change the client: callModel streams with `.stream()`.
 * Constructing ChatOpenAI with `streaming: true` would make a plain `invoke()` estimate
 * token counts with tiktoken, which downloads its encoding from the internet.
 */
export function createChatModel(
  role: Role,
  settings: Partial<ModelSettings> = {},
  env: Env = process.env,
): ChatOpenAI {
  const parsed = parseModelSettings(settings);
  return chatModelFor(role, parsed, resolveModel(role, parsed, env));
}

/** Forgets the cached clients (tests that change the environment between calls). */
export function clearChatModelCache(): void {
  chatModels.clear();
  localModels.clear();
}

/** The embedded model for a `local:` resolution; the GGUF file itself loads once per process. */
function localChatModelFor(settings: ModelSettings, resolved: ResolvedModel): ChatLocalModel {
  const local = resolved.local as NonNullable<ResolvedModel["local"]>;
  const { temperature, timeoutMs } = settings;
  const maxTokens = settings.maxTokens ?? local.maxTokens;
  const key = JSON.stringify([
    local.path,
    resolved.model,
    temperature,
    timeoutMs,
    maxTokens,
    local.contextSize,
  ]);
  const cached = localModels.get(key);
  if (cached) return cached;
  const chat = new ChatLocalModel({
    modelPath: local.path,
    model: resolved.model,
    temperature,
    timeoutMs,
    maxTokens,
    contextSize: local.contextSize,
  });
  localModels.set(key, chat);
  return chat;
}

function chatModelFor(role: Role, settings: ModelSettings, resolved: ResolvedModel): ChatOpenAI {
  const baseURL = resolved.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const { temperature, timeoutMs, maxRetries, maxTokens } = settings;
  const key = JSON.stringify([
    role,
    resolved.model,
    baseURL,
    resolved.apiKey,
    temperature,
    timeoutMs,
    maxRetries,
    maxTokens,
  ]);
  const cached = chatModels.get(key);
  if (cached) return cached;
  const chat = new ChatOpenAI({
    model: resolved.model,
    apiKey: resolved.apiKey,
    temperature,
    timeout: timeoutMs,
    maxRetries,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    onFailedAttempt: onFailedModelAttempt,
    // Asks for a final usage chunk (stream_options.include_usage) when streaming.
    streamUsage: true,
    configuration: { baseURL, fetch: guardedFetch(timeoutMs) },
  });
  chatModels.set(key, chat);
  return chat;
}

/**
 * One exchange with the model of `role`: its text, token usage (0 when the server reports
 * none) and duration. Failures, empty replies and replies that are not chat completions throw
 * ModelCallError; a call cancelled by `opts.signal` rethrows the abort error unchanged. While it
 * waits, the call is listed by modelCallsInFlight (activity.ts).
 */
export async function callModel(
  role: Role,
  messages: BaseMessageLike[],
  settings: Partial<ModelSettings> = {},
  opts: CallModelOptions = {},
): Promise<ModelReply> {
  const parsed = parseModelSettings(settings);
  const resolved = resolveModel(role, parsed);
  const chat: ChatClient = resolved.local
    ? localChatModelFor(parsed, resolved)
    : chatModelFor(role, parsed, resolved);
  // A local model's "endpoint" is its file: errors and slow-call notices name it.
  const baseUrl = resolved.local?.path ?? resolved.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const record: CallRecord = { attempts: 0 };
  const failure = (reason: string, cause?: unknown) =>
    new ModelCallError({
      role,
      speaker: opts.speaker,
      model: resolved.model,
      baseUrl,
      attempts: record.attempts,
      reason,
      status: statusOf(cause),
      cause,
    });

  const cacheFile = opts.replayCache ?? operatorSettings().replayCache;
  const cache = cacheFile ? replayCacheAt(cacheFile) : undefined;
  const cacheKey = cache ? replayKey(chat, baseUrl, messages, parsed.seed) : "";
  const recorded = cache?.get(cacheKey);
  if (recorded) return { ...recorded, ms: 0, model: resolved.model, cached: true };

  // The embedded model sends nothing anywhere: the audit log says so for each of its calls.
  if (resolved.local) recordLocalCall(resolved.model, resolved.local.path);
  const started = performance.now();
  const activity = {
    role,
    speaker: opts.speaker,
    model: resolved.model,
    host: hostOf(baseUrl),
    startedAt: started,
    record,
  };
  let reply: AIMessageChunk | undefined;
  try {
    const { signal, callbacks, runName, tags, metadata } = opts;
    const common = { signal, callbacks, runName, tags, metadata, seed: parsed.seed };
    // An embedded model answers in the grammar of whoever speaks.
    const callOptions = resolved.local
      ? { ...common, speaker: opts.speaker ?? role, grammar: opts.grammar }
      : common;
    reply = await trackModelCall(activity, () =>
      recordingCall(record, () =>
        parsed.streaming
          ? streamReply(chat, messages, callOptions)
          : chat.invoke(messages, callOptions),
      ),
    );
  } catch (error) {
    if (opts.signal?.aborted) throw error;
    if (notChatCompletion(record)) {
      const notChat = new NotChatCompletionError(record.head ?? "", { cause: error });
      throw failure(notChat.message, notChat);
    }
    throw failure(describeCause(error, parsed.timeoutMs), error);
  }
  const ms = Math.round(performance.now() - started);
  if (reply === undefined) {
    // A stream that carried no chat completion chunk at all: an HTML page, other JSON...
    const notChat = new NotChatCompletionError(record.head ?? "");
    throw failure(notChat.message, notChat);
  }

  const text = reply.text;
  if (text.trim() === "") throw failure("the reply has no text", new EmptyReplyError());
  const usage: UsageMetadata | undefined = reply.usage_metadata;
  const result = {
    text,
    promptTokens: usage?.input_tokens ?? 0,
    completionTokens: usage?.output_tokens ?? 0,
    ms,
    model: resolved.model,
  };
  cache?.put(cacheKey, resolved.model, result);
  return result;
}

/**
 * The replay cache key of a request: the endpoint, every parameter the client sends (model,
 * temperature, max tokens, stop, seed...: whatever is set), and the messages by role and
 * content. Streaming or not is left out: it changes how the reply arrives, not what it says.
 */
function replayKey(
  chat: ChatClient,
  baseUrl: string,
  messages: BaseMessageLike[],
  seed: number | undefined,
): string {
  const params = Object.fromEntries(
    Object.entries(chat.invocationParams(seed === undefined ? undefined : { seed })).filter(
      ([name]) => !name.startsWith("stream"),
    ),
  );
  return ReplayCache.key({
    v: 1,
    baseUrl,
    params,
    messages: messages.map((like) => {
      const m = coerceMessageLikeToMessage(like);
      const extra = m as { tool_calls?: unknown; tool_call_id?: unknown };
      return {
        role: m.getType(),
        content: m.content,
        name: m.name,
        tool_calls:
          Array.isArray(extra.tool_calls) && extra.tool_calls.length ? extra.tool_calls : undefined,
        tool_call_id: extra.tool_call_id,
      };
    }),
  });
}

async function streamReply(
  chat: ChatClient,
  messages: BaseMessageLike[],
  options: CallModelOptions,
): Promise<AIMessageChunk | undefined> {
  let whole: AIMessageChunk | undefined;
  for await (const chunk of await chat.stream(messages, options)) {
    whole = whole === undefined ? chunk : whole.concat(chunk);
  }
  return whole;
}
