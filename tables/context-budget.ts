import type { Tokenizer } from "./tokens.js";

/** One line of a prompt section that may be left out; lower priorities are kept first. */
export interface Piece {
  text: string;
  priority: number;
  /** A longer line that replaces `text` when it fits too (a column's statistics). */
  upgrade?: { text: string; priority: number };
}

/** Lines shown together: `head` only when a piece of it is kept, or always if `fixed`. */
export interface Section {
  head: string[];
  pieces: Piece[];
  fixed?: boolean;
}

export interface Packed {
  text: string;
  tokens: number;
  /** Pieces kept, per section, by position. */
  kept: boolean[][];
  /** Whether the fixed lines alone were over the budget and had to be cut. */
  cut: boolean;
}

interface Item {
  section: number;
  piece: number;
  upgrade: boolean;
  priority: number;
}

function render(sections: readonly Section[], kept: boolean[][], upgraded: boolean[][]): string {
  const lines: string[] = [];
  for (const [s, section] of sections.entries()) {
    const shown = section.pieces.flatMap((piece, p) => {
      if (!kept[s]?.[p]) return [];
      return [upgraded[s]?.[p] && piece.upgrade ? piece.upgrade.text : piece.text];
    });
    if (shown.length === 0 && !section.fixed) continue;
    lines.push(...section.head, ...shown);
  }
  return lines.join("\n");
}

/**
 * Keeps the most important pieces whose tokens fit `budget`: greedily by priority (then
 * position), estimating a line as its tokens plus one for the line break, then checks the
 * exact count of the text and drops the last pieces taken until it fits. The fixed lines are
 * cut at the budget if they alone are over it, so the result never exceeds it.
 */
export function packSections(
  sections: readonly Section[],
  budget: number,
  tokenizer: Tokenizer,
): Packed {
  const cost = (lines: readonly string[]) =>
    lines.reduce((sum, line) => sum + tokenizer.count(line) + 1, 0);
  const kept = sections.map((section) => section.pieces.map(() => false));
  const upgraded = sections.map((section) => section.pieces.map(() => false));
  let used = sections.reduce((sum, section) => sum + (section.fixed ? cost(section.head) : 0), 0);

  const items: Item[] = sections.flatMap((section, s) =>
    section.pieces.flatMap((piece, p) => {
      const base = { section: s, piece: p, upgrade: false, priority: piece.priority };
      return piece.upgrade
        ? [base, { section: s, piece: p, upgrade: true, priority: piece.upgrade.priority }]
        : [base];
    }),
  );
  items.sort((a, b) => a.priority - b.priority || a.section - b.section || a.piece - b.piece);

  const taken: Item[] = [];
  /** The tokens an item would add, or null when it cannot be taken now. */
  const extraTokens = (item: Item): number | null => {
    const section = sections[item.section];
    const piece = section?.pieces[item.piece];
    if (!section || !piece) return null;
    const isKept = kept[item.section]?.[item.piece] ?? false;
    if (!item.upgrade) {
      if (isKept) return null;
      const opened = section.fixed || kept[item.section]?.some(Boolean);
      return cost([piece.text]) + (opened ? 0 : cost(section.head));
    }
    if (!isKept || !piece.upgrade || upgraded[item.section]?.[item.piece]) return null;
    return Math.max(cost([piece.upgrade.text]) - cost([piece.text]), 0);
  };
  let text = "";
  let tokens = 0;
  // The estimate counts a line break as a token, which it often is not: a second pass fills
  // what the exact count shows is left.
  for (let pass = 0; pass < 3; pass++) {
    let added = false;
    for (const item of items) {
      const extra = extraTokens(item);
      if (extra === null || used + extra > budget) continue;
      used += extra;
      const row = item.upgrade ? upgraded[item.section] : kept[item.section];
      if (row) row[item.piece] = true;
      taken.push(item);
      added = true;
    }
    text = render(sections, kept, upgraded);
    tokens = tokenizer.count(text);
    while (tokens > budget && taken.length > 0) {
      const last = taken.pop();
      if (!last) break;
      // Undone in reverse, an upgrade goes before the piece it upgrades.
      const row = last.upgrade ? upgraded[last.section] : kept[last.section];
      if (row) row[last.piece] = false;
      text = render(sections, kept, upgraded);
      tokens = tokenizer.count(text);
      added = false;
    }
    if (!added) break;
    used = tokens;
  }
  let cut = false;
  if (tokens > budget) {
    text = tokenizer.truncate(text, budget);
    tokens = tokenizer.count(text);
    cut = true;
  }
  return { text, tokens, kept, cut };
}
