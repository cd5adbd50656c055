/*
 * A tiny grammar builder for the embedded model's replies. One description gives both the GBNF
 * text llama.cpp constrains generation with and a sampler of strings the grammar allows (the
 * unit tests feed those samples to the nodes' parsers).
 */

export type Grammar =
  | { kind: "lit"; text: string }
  | { kind: "chars"; only?: string; except?: string; noControl: boolean; min: number; max: number }
  | { kind: "seq"; items: Grammar[] }
  | { kind: "alt"; items: Grammar[] }
  | { kind: "rep"; item: Grammar; min: number; max: number };

export const lit = (text: string): Grammar => ({ kind: "lit", text });
export const seq = (...items: Grammar[]): Grammar => ({ kind: "seq", items });
export const alt = (...items: Grammar[]): Grammar => ({ kind: "alt", items });
export const rep = (item: Grammar, min: number, max: number): Grammar => ({
  kind: "rep",
  item,
  min,
  max,
});
export const opt = (item: Grammar): Grammar => rep(item, 0, 1);

/** Between `min` and `max` characters, none of them in `except` (nor a control character). */
export function textExcept(except: string, min: number, max: number): Grammar {
  return { kind: "chars", except, noControl: true, min, max };
}

/** Between `min` and `max` characters, each one of `only`. */
export function textOf(only: string, min: number, max: number): Grammar {
  return { kind: "chars", only, noControl: false, min, max };
}

/** `item`, then up to `max - 1` more each after `separator`. */
export function listOf(item: Grammar, separator: string, min: number, max: number): Grammar {
  const tail = rep(seq(lit(separator), item), Math.max(0, min - 1), Math.max(0, max - 1));
  const some = seq(item, tail);
  return min === 0 ? opt(some) : some;
}

function escapeChar(c: string, inClass: boolean): string {
  if (c === "\n") return "\\n";
  if (c === "\r") return "\\r";
  if (c === "\t") return "\\t";
  if (c === "\\") return "\\\\";
  if (c === '"') return '\\"';
  if (inClass && (c === "]" || c === "[" || c === "^" || c === "-")) return `\\${c}`;
  const code = c.charCodeAt(0);
  if (code < 0x20) return `\\x${code.toString(16).padStart(2, "0")}`;
  return c;
}

function charClass(g: Extract<Grammar, { kind: "chars" }>): string {
  const chars = [...new Set(g.only ?? g.except ?? "")].map((c) => escapeChar(c, true)).join("");
  if (g.only !== undefined) return `[${chars}]`;
  return `[^${chars}${g.noControl ? "\\x00-\\x1f" : ""}]`;
}

/*
 * llama.cpp expands `x{m,n}` into n rules and refuses grammars where repetitions multiply past a
 * few thousand; a character run whose bound would be repeated that often is left open (`{m,}`)
 * and max tokens bounds it instead.
 */
const EXPANSION_LIMIT = 1500;

function emit(g: Grammar, repeated = 1): string {
  switch (g.kind) {
    case "lit":
      return `"${[...g.text].map((c) => escapeChar(c, false)).join("")}"`;
    case "chars":
      if (g.min === 1 && g.max === 1) return charClass(g);
      return repeated * g.max > EXPANSION_LIMIT
        ? `${charClass(g)}{${g.min},}`
        : `${charClass(g)}{${g.min},${g.max}}`;
    case "seq":
      return g.items.length === 0 ? '""' : `(${g.items.map((i) => emit(i, repeated)).join(" ")})`;
    case "alt":
      return `(${g.items.map((i) => emit(i, repeated)).join(" | ")})`;
    case "rep":
      return `${emit(g.item, repeated * Math.max(1, g.max))}{${g.min},${g.max}}`;
  }
}

/** The grammar as GBNF with one rule, `root`. */
export function toGbnf(g: Grammar): string {
  return `root ::= ${emit(g)}\n`;
}

/** Whether `c` is a character the class of `g` allows. */
export function allows(g: Extract<Grammar, { kind: "chars" }>, c: string): boolean {
  if (g.only !== undefined) return g.only.includes(c);
  if (g.noControl && c.charCodeAt(0) < 0x20) return false;
  return !(g.except ?? "").includes(c);
}

/** Characters and pieces a sample draws from: plain text and what a parser might trip on. */
const ALPHABET = [..."abcXYZ 0129.,:;*#-_()[]{}'\"`<>/\\|=%$€\n\t"];
const PIECES = [
  "Final Answer: ",
  "Evidence: ",
  "```",
  "```python",
  "</plan>",
  "<plan>",
  "1. ",
  "Route: code",
  "Diagnosis: ",
  '{"type": 2}',
  "Winner: B",
  "**",
  "  ",
];

/** A string the grammar allows, drawn with `random` (a function like Math.random). */
export function sample(g: Grammar, random: () => number): string {
  const pick = (n: number) => Math.floor(random() * n);
  switch (g.kind) {
    case "lit":
      return g.text;
    case "chars": {
      const letters = g.only !== undefined ? [...g.only] : ALPHABET.filter((c) => allows(g, c));
      const pieces = PIECES.filter((p) => [...p].every((c) => allows(g, c)));
      const length = g.min + pick(Math.min(g.max, g.min + 40) - g.min + 1);
      let out = "";
      while ([...out].length < length) {
        const piece = pieces.length > 0 && random() < 0.15 ? pieces[pick(pieces.length)] : "";
        const next = piece || (letters[pick(letters.length)] ?? "");
        if ([...out].length + [...next].length > length) {
          out += letters[pick(letters.length)] ?? "";
        } else out += next;
      }
      return out;
    }
    case "seq":
      return g.items.map((item) => sample(item, random)).join("");
    case "alt":
      return sample(g.items[pick(g.items.length)] as Grammar, random);
    case "rep": {
      const times = g.min + pick(Math.min(g.max, g.min + 6) - g.min + 1);
      return Array.from({ length: times }, () => sample(g.item, random)).join("");
    }
  }
}

/** The longest string the grammar allows, in characters. */
export function maxLength(g: Grammar): number {
  switch (g.kind) {
    case "lit":
      return g.text.length;
    case "chars":
      return g.max;
    case "seq":
      return g.items.reduce((sum, item) => sum + maxLength(item), 0);
    case "alt":
      return Math.max(0, ...g.items.map(maxLength));
    case "rep":
      return g.max * maxLength(g.item);
  }
}
