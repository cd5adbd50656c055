import type { BaseMessage } from "@langchain/core/messages";
import type { ChatHistoryItem } from "node-llama-cpp";

/** A message's text; a small model reads text only, so other content parts are dropped. */
export function textOf(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/**
 * LangChain messages as node-llama-cpp chat history, ending with an empty model turn to
 * complete. Several system messages are joined into one: chat templates take one.
 */
export function toChatHistory(messages: readonly BaseMessage[]): ChatHistoryItem[] {
  const system = messages
    .filter((m) => m.getType() === "system")
    .map(textOf)
    .join("\n\n");
  const history: ChatHistoryItem[] = system ? [{ type: "system", text: system }] : [];
  for (const message of messages) {
    const type = message.getType();
    if (type === "system") continue;
    if (type === "ai") history.push({ type: "model", response: [textOf(message)] });
    else history.push({ type: "user", text: textOf(message) });
  }
  history.push({ type: "model", response: [] });
  return history;
}

const MARK = (chars: number) => `\n[... ${chars} characters cut to fit the model's context ...]\n`;
const MAX_ROUNDS = 6;

function textItem(item: ChatHistoryItem): string {
  if (item.type === "model") return item.response.filter((r) => typeof r === "string").join("");
  return typeof item.text === "string" ? item.text : "";
}

function withText(item: ChatHistoryItem, text: string): ChatHistoryItem {
  return item.type === "model" ? { type: "model", response: [text] } : { ...item, text };
}

/**
 * Cuts the middle out of the longest messages until the prompt leaves `reserve` tokens of the
 * context for the reply: the head of a table and its question at the end survive. Returns the
 * history and its token count; throws when even cutting cannot make it fit.
 */
export function fitHistory(
  history: readonly ChatHistoryItem[],
  countTokens: (history: readonly ChatHistoryItem[]) => number,
  budget: number,
): { history: ChatHistoryItem[]; tokens: number; cutChars: number } {
  let fitted = [...history];
  let tokens = countTokens(fitted);
  let cutChars = 0;
  for (let round = 0; tokens > budget && round < MAX_ROUNDS; round++) {
    const texts = fitted.map(textItem);
    const longest = texts.reduce(
      (best, t, i) => (t.length > (texts[best]?.length ?? 0) ? i : best),
      0,
    );
    const text = texts[longest] ?? "";
    const charsPerToken = Math.max(1, texts.join("").length / Math.max(1, tokens));
    // 10% more than the estimate, so that one or two rounds are enough.
    const cut = Math.min(text.length, Math.ceil((tokens - budget) * charsPerToken * 1.1) + 64);
    const keepHead = Math.floor((text.length - cut) * 0.6);
    const keepTail = text.length - cut - keepHead;
    const shorter = text.slice(0, keepHead) + MARK(cut) + text.slice(text.length - keepTail);
    fitted = fitted.map((item, i) => (i === longest ? withText(item, shorter) : item));
    cutChars += cut;
    tokens = countTokens(fitted);
  }
  if (tokens > budget) {
    throw new Error(
      `the prompt needs ${tokens} tokens and cannot be cut to the ${budget} the model's context leaves`,
    );
  }
  return { history: fitted, tokens, cutChars };
}
