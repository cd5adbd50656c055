import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { ChatHistoryItem, LlamaGrammar } from "node-llama-cpp";
import { WorkCache } from "../storage/bounded-cache.js";
import { grammarFor, type ReplyGrammar } from "./local-grammar.js";
import { fitHistory, textOf, toChatHistory } from "./local-prompt.js";
import type { LocalRuntime } from "./local-runtime.js";
import { DEFAULT_LOCAL_CONTEXT_SIZE, DEFAULT_LOCAL_MAX_TOKENS } from "./local-spec.js";

export interface ChatLocalModelFields extends BaseChatModelParams {
  /** The GGUF file. */
  modelPath: string;
  /** The name callers know it by (`local:...`), reported as the reply's model. */
  model?: string;
  temperature?: number;
  /** A cap on the reply's tokens (default 512; at most half the context). */
  maxTokens?: number;
  /** A whole call, waiting for the model included, fails after this many ms. */
  timeoutMs?: number;
  contextSize?: number;
  /** Stop sequences for every call, besides the chat template's own end of turn. */
  stop?: string[];
}

export interface ChatLocalModelCallOptions extends BaseChatModelCallOptions {
  seed?: number;
  maxTokens?: number;
  /** Who speaks (a role, or an agent using a role's model): the grammar its replies keep to. */
  speaker?: string;
  /** A grammar the speaker built itself (the decomposer's, from its workers' inputs). */
  grammar?: ReplyGrammar;
}

/**
 * A LangChain chat model over a GGUF file run in-process by node-llama-cpp. The chat template is
 * the GGUF's own. The model loads on the first call and stays loaded for the process; calls to
 * the same model take turns. Prompts longer than the context are cut in the middle of their
 * longest message, and every reply is bounded by max tokens, stop sequences and a timeout.
 */
export class ChatLocalModel extends BaseChatModel<ChatLocalModelCallOptions> {
  readonly modelPath: string;
  readonly model: string;
  readonly temperature: number;
  readonly maxTokens: number;
  readonly timeoutMs: number | undefined;
  readonly contextSize: number;
  readonly stop: string[];

  static override lc_name(): string {
    return "ChatLocalModel";
  }

  constructor(fields: ChatLocalModelFields) {
    // One try: a local failure (a corrupt file, a timeout) does not mend itself.
    super({ ...fields, maxRetries: 0 });
    this.modelPath = fields.modelPath;
    this.model = fields.model ?? fields.modelPath;
    this.temperature = fields.temperature ?? 0;
    this.maxTokens = fields.maxTokens ?? DEFAULT_LOCAL_MAX_TOKENS;
    this.timeoutMs = fields.timeoutMs;
    this.contextSize = fields.contextSize ?? DEFAULT_LOCAL_CONTEXT_SIZE;
    this.stop = fields.stop ?? [];
  }

  _llmType(): string {
    return "node-llama-cpp";
  }

  /** What a call sends to the model: the replay cache keys on it. */
  override invocationParams(options?: Partial<ChatLocalModelCallOptions>): Record<string, unknown> {
    return {
      model: this.model,
      model_path: this.modelPath,
      temperature: this.temperature,
      max_tokens: options?.maxTokens ?? this.maxTokens,
      context_size: this.contextSize,
      stop: [...this.stop, ...(options?.stop ?? [])],
      // Replies are constrained by a grammar per role (local-grammar.ts): not the same replies.
      grammar: "role",
      ...(options?.seed === undefined ? {} : { seed: options.seed }),
    };
  }

  /** Loads the model now rather than on the first call. */
  async load(): Promise<LocalRuntime> {
    // node-llama-cpp (about 400 modules) loads only when a local model answers.
    const { loadLocalModel } = await import("./local-runtime.js");
    return loadLocalModel(this.modelPath, this.contextSize);
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const signals = [
      options.signal,
      this.timeoutMs ? AbortSignal.timeout(this.timeoutMs) : undefined,
    ];
    const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
    const runtime = await this.load();
    signal.throwIfAborted();
    const user = messages.filter((m) => m.getType() === "human").at(-1);
    const shape = options.speaker
      ? grammarFor(options.speaker, user ? textOf(user) : "", options.grammar)
      : undefined;
    const grammar = shape ? await grammarOf(runtime, shape.gbnf) : undefined;
    const maxTokens = Math.min(
      options.maxTokens ?? this.maxTokens,
      shape?.maxTokens ?? Number.POSITIVE_INFINITY,
      Math.floor(runtime.contextSize / 2),
    );
    const stop = [...this.stop, ...(options.stop ?? [])].filter((s) => s !== "");
    return runtime.exclusive(async (chat, sequence) => {
      signal.throwIfAborted();
      const count = (history: readonly ChatHistoryItem[]) =>
        chat.chatWrapper
          .generateContextState({ chatHistory: history })
          .contextText.tokenize(runtime.model.tokenizer).length;
      const fitted = fitHistory(toChatHistory(messages), count, runtime.contextSize - maxTokens);
      let completionTokens = 0;
      const started = performance.now();
      const reply = await chat
        .generateResponse(fitted.history, {
          maxTokens,
          temperature: this.temperature,
          ...(options.seed === undefined ? {} : { seed: options.seed }),
          ...(stop.length ? { customStopTriggers: stop } : {}),
          ...(grammar ? { grammar } : {}),
          signal,
          onToken: (tokens) => {
            completionTokens += tokens.length;
          },
          onTextChunk: (text) => {
            void runManager?.handleLLMNewToken(text);
          },
        })
        // Each call starts from a clean sequence: nothing leaks from one prompt to the next.
        .finally(() => sequence.clearHistory());
      const stopReason = reply.metadata.stopReason;
      const message = new AIMessage({
        content: reply.response,
        usage_metadata: {
          input_tokens: fitted.tokens,
          output_tokens: completionTokens,
          total_tokens: fitted.tokens + completionTokens,
        },
        response_metadata: {
          model_name: this.model,
          finish_reason: stopReason === "maxTokens" ? "length" : "stop",
          generation_ms: Math.round(performance.now() - started),
          ...(fitted.cutChars ? { prompt_chars_cut: fitted.cutChars } : {}),
          ...(shape ? { grammar: shape.role } : {}),
        },
      });
      return { generations: [{ text: reply.response, message }] };
    });
  }
}

/** Compiled grammars by GBNF text; answerer grammars differ by the ids they allow, so bounded. */
const grammars = new WorkCache<LlamaGrammar>(64);

function grammarOf(runtime: LocalRuntime, gbnf: string): Promise<LlamaGrammar> {
  return grammars.obtain(gbnf, () => runtime.model.llama.createGrammar({ grammar: gbnf }));
}
