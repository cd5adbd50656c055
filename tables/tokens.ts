import type { Tiktoken } from "js-tiktoken/lite";

/** The encoding of gpt-4o and gpt-4o-mini, the default model's family. */
export const TOKEN_ENCODING = "o200k_base";

/** Counts and cuts text in model tokens. */
export interface Tokenizer {
  readonly encoding: string;
  count(text: string): number;
  /** The longest prefix of `text` that is at most `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

let loading: Promise<Tokenizer> | undefined;

/**
 * The tokenizer, loaded on first use: building o200k_base's rank table takes about half a
 * second, so only a process that builds a prompt pays for it (never the CLI's startup).
 */
export function loadTokenizer(): Promise<Tokenizer> {
  loading ??= load();
  return loading;
}

async function load(): Promise<Tokenizer> {
  const [{ Tiktoken }, ranks] = await Promise.all([
    import("js-tiktoken/lite"),
    import("js-tiktoken/ranks/o200k_base"),
  ]);
  const encoder: Tiktoken = new Tiktoken(ranks.default);
  return {
    encoding: TOKEN_ENCODING,
    // Special-token spellings in a table cell are ordinary text here, never control tokens.
    count: (text) => (text ? encoder.encode(text, [], []).length : 0),
    truncate(text, maxTokens) {
      if (maxTokens <= 0) return "";
      const tokens = encoder.encode(text, [], []);
      if (tokens.length <= maxTokens) return text;
      let cut = encoder.decode(tokens.slice(0, maxTokens));
      // A cut inside a multi-byte character decodes to U+FFFD: drop it.
      while (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
      while (cut && encoder.encode(cut, [], []).length > maxTokens) cut = cut.slice(0, -1);
      return cut;
    },
  };
}

/** Tokens in `text` under TOKEN_ENCODING. */
export async function countTokens(text: string): Promise<number> {
  return (await loadTokenizer()).count(text);
}
