import {
  alt,
  type Grammar,
  listOf,
  lit,
  opt,
  rep,
  seq,
  textExcept,
  textOf,
  toGbnf,
} from "./local-grammar-dsl.js";
import { queryGrammar } from "./query/language.js";
import { queryTableIn } from "./query/table.js";

/*
 * The embedded model is too small to keep to a reply format on its own, so its replies are
 * constrained by a grammar chosen from the system message's header (`# tableminds <role>`).
 * Each grammar is the format the role's prompt asks for and its parser reads, with free text
 * (of bounded length) inside. A role without one generates freely. Only the local model uses
 * these: prompts and parsers stay as they are.
 */

export interface RoleGrammar {
  role: string;
  grammar: Grammar;
  /** The grammar as GBNF, for `llama.createGrammar`. */
  gbnf: string;
  /** A cap on the reply's tokens for this role (the smaller of it and the configured one wins). */
  maxTokens: number;
}

const HEADER = /^\s*#\s*tableminds\s+([\w-]+)/;

/** The role a system message names in its first line, e.g. `planner`. */
export function roleOfSystem(system: string): string | undefined {
  return HEADER.exec(system)?.[1]?.toLowerCase();
}

const MAX_IDS = 32;

/** Evidence ids the prompt shows in square brackets (`[a1:out2]`, `[a1:out1, a1:by_year]`). */
export function evidenceIdsIn(text: string): string[] {
  const ids = [...text.matchAll(/\[([^\]\n]{1,400})\]/g)].flatMap((m) =>
    (m[1] ?? "").split(/,\s*/).map((id) => id.trim()),
  );
  return [...new Set(ids.filter((id) => /^\w[\w:.-]*$/.test(id) && id.includes(":")))].slice(
    0,
    MAX_IDS,
  );
}

/** A line of free text that starts with something visible and holds none of `except`. */
function line(max: number, except = ""): Grammar {
  return seq(textExcept(`\n \t*#.<${except}`, 1, 1), textExcept(`\n${except}`, 0, max - 1));
}

/** "1. ...\n", then optionally "2. ...\n" and so on up to `max` lines, numbered in order. */
function numbered(max: number, lineMax: number, from = 1, start?: Grammar): Grammar {
  const text = start ? seq(start, line(lineMax, "<")) : line(lineMax, "<");
  const step = seq(lit(`${from}. `), text, lit("\n"));
  return from >= max ? step : seq(step, opt(numbered(max, lineMax, from + 1, start)));
}

/*
 * Each plan step starts with what it does, so that a small model writes steps rather than a
 * guessed answer (a bare "1. 203").
 */
const STEP_VERBS = [
  "Keep",
  "Filter",
  "Select",
  "Find",
  "Look up",
  "Group",
  "Sum",
  "Count",
  "Average",
  "Compute",
  "Compare",
  "Subtract",
  "Divide",
  "Sort",
  "Take",
  "Rank",
  "List",
  "Convert",
  "Print",
];
const step = seq(alt(...STEP_VERBS.map(lit)), lit(" "));

/** A JSON string of free text (no quotes, backslashes or control characters inside). */
function jsonString(max: number): Grammar {
  return seq(lit('"'), textExcept('"\\', 1, max), lit('"'));
}

function jsonList(item: Grammar, min: number, max: number): Grammar {
  return seq(lit("["), listOf(item, ", ", min, max), lit("]"));
}

function fenced(language: string, lines: number, lineMax: number): Grammar {
  const first = seq(textExcept("`\n \t", 1, 1), textExcept("`\n", 0, lineMax - 1), lit("\n"));
  const next = seq(textExcept("`\n", 0, lineMax), lit("\n"));
  return seq(lit(`\`\`\`${language}\n`), first, rep(next, 0, lines - 1), lit("```"));
}

/** `Final Answer: <line>` and `Evidence: <ids>`, the ids those the prompt shows. */
function finalAnswer(user: string): Grammar {
  const ids = evidenceIdsIn(user);
  const id = ids.length > 0 ? alt(...ids.map(lit)) : lit("none");
  return seq(
    lit("Final Answer: "),
    seq(textExcept('\n \t*`"<', 1, 1), textExcept("\n", 0, 119)),
    lit("\nEvidence: "),
    listOf(id, ", ", 1, Math.min(4, Math.max(1, ids.length))),
  );
}

function scores(): Grammar {
  const score = textOf("012", 1, 1);
  return seq(
    lit('{"type": '),
    score,
    lit(', "format": '),
    score,
    lit(', "grounding": '),
    score,
    lit(', "issues": '),
    jsonList(jsonString(120), 0, 3),
    lit("}"),
  );
}

function reflection(): Grammar {
  return seq(
    lit("Diagnosis: "),
    line(200),
    lit("\nRoute: "),
    alt(lit("plan"), lit("code")),
    lit("\nImprovement:\n"),
    numbered(3, 160),
  );
}

function notes(): Grammar {
  return seq(
    lit('{"lessons": '),
    // At least one note: the archiver reads a reply with none as no reply.
    jsonList(jsonString(140), 1, 3),
    lit(', "pitfalls": '),
    jsonList(jsonString(140), 0, 2),
    lit("}"),
  );
}

/** The decomposer lists its workers as `- name: ...` lines and says `At most N subtasks`. */
function subtasks(system: string): Grammar {
  const named = [...system.matchAll(/^- ([\w-]+): /gm)].map((m) => m[1] ?? "");
  const workers = named.length > 0 ? named : ["pandas"];
  const most = Number(/at most (\d+) subtasks/i.exec(system)?.[1] ?? 3);
  const max = Math.max(1, Math.min(3, most));
  const worker = seq(lit('"'), alt(...workers.map(lit)), lit('"'));
  const sid = seq(lit('"s'), textOf("123456789", 1, 1), lit('"'));
  const subtask = seq(
    lit('{"id": '),
    sid,
    lit(', "task": '),
    jsonString(200),
    lit(', "workers": '),
    jsonList(worker, 1, 2),
    lit(', "dependsOn": '),
    jsonList(sid, 0, 2),
    lit(', "args": {}}'),
  );
  return seq(lit('{"subtasks": '), jsonList(subtask, 1, max), lit("}"));
}

/** The grammar and token cap for a reply to `system` (and the user's `user`), if its role has one. */
export function grammarFor(system: string, user: string): RoleGrammar | undefined {
  const role = roleOfSystem(system);
  const made = ((): [Grammar, number] | undefined => {
    switch (role) {
      case "planner":
        return [seq(lit("<plan>\n"), numbered(6, 160, 1, step), lit("</plan>")), 320];
      case "coder":
        // At most 14 lines of 100 characters (about 400 tokens): the fence always closes
        // within the cap, whatever the model writes.
        return [fenced("python", 14, 100), 512];
      case "answerer":
      case "composer":
        return [finalAnswer(user), 128];
      case "checker":
        return [scores(), 160];
      case "reflector":
        return [reflection(), 256];
      case "archiver":
        return [notes(), 224];
      case "decomposer":
        return [subtasks(system), 384];
      case "query": {
        // The coder's query dialect: the grammar is the table's, read from the prompt's listing.
        const table = queryTableIn(user);
        return table ? [queryGrammar(table), 200] : undefined;
      }
      case "sql":
        return [fenced("sql", 8, 100), 320];
      case "calc":
        return [fenced("python", 1, 150), 160];
      case "judge":
        return [seq(lit("Winner: "), alt(lit("A"), lit("B"))), 8];
      default:
        return undefined;
    }
  })();
  if (!made || !role) return undefined;
  const [grammar, maxTokens] = made;
  return { role, grammar, gbnf: toGbnf(grammar), maxTokens };
}
