import { ReplyParseError } from "./llm.js";

/*
 * The reply format the answerer and the orchestrator's composer share: a `Final Answer:` line,
 * then an `Evidence:` line of cited ids.
 */

const EVIDENCE_LINE = /^\s*\**\s*evidence\s*\**\s*:\s*\**\s*(.*)$/im;
const MARKER = /\**\s*final\s+answer\s*\**\s*[:：-]\s*\**\s*(.*)$/im;

function tidy(text: string): string {
  return text
    .trim()
    .replace(/^[*`"]+|[*`"]+$/g, "")
    .trim();
}

export interface ParsedAnswer {
  final: string;
  cited: string[];
}

/**
 * The answer line and the cited ids of an answerer reply. Tolerates markdown around
 * the marker and an answer on the line after it; without a marker, a reply of one
 * short line is taken as the answer. Anything else fails.
 */
export function parseAnswer(reply: string): ParsedAnswer {
  const cited = parseCitations(reply);
  const marked = MARKER.exec(reply);
  if (marked) {
    let final = tidy(marked[1] ?? "");
    if (!final) {
      const after = reply.slice((marked.index ?? 0) + marked[0].length).split("\n");
      final = tidy(after.find((line) => line.trim() && !EVIDENCE_LINE.test(line)) ?? "");
    }
    if (final) return { final, cited };
  }
  const lines = reply
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !EVIDENCE_LINE.test(line));
  if (lines.length === 1 && lines[0] && lines[0].length <= 200) {
    return { final: tidy(lines[0]), cited };
  }
  throw new ReplyParseError("answerer", '"Final Answer:" line', reply);
}

function parseCitations(reply: string): string[] {
  const line = EVIDENCE_LINE.exec(reply)?.[1] ?? "";
  const bracketed = [...reply.matchAll(/\[([\w:.-]+)\]/g)].map((m) => m[1] ?? "");
  const listed = line.split(/[,\s]+/).map((id) => id.replace(/^\[|\]$/g, ""));
  return [...new Set([...listed, ...bracketed].filter((id) => /^\w[\w:.-]*$/.test(id)))];
}
