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
 * constrained by the grammar of whoever speaks: the speaker a node names when it asks (a role,
 * or an agent using a role's model, such as the decomposer), never read from the prompt.
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

/** A worker as the decomposer's grammar needs it: its name and its input's JSON Schema. */
export interface WorkerShape {
  name: string;
  input: {
    properties?: Record<string, { type?: string; enum?: unknown[] }>;
    required?: string[];
  };
}

const DIGITS = "0123456789";
/** A JSON integer: no leading zeros. */
const whole = seq(
  opt(lit("-")),
  alt(lit("0"), seq(textOf("123456789", 1, 1), textOf(DIGITS, 0, 11))),
);

/** A JSON value of a property's type: a number, true or false, one of an enum, else a string. */
function jsonValue(property: { type?: string; enum?: unknown[] }): Grammar {
  if (property.enum?.length) return alt(...property.enum.map((v) => lit(JSON.stringify(v))));
  switch (property.type) {
    case "integer":
      return whole;
    case "number":
      return seq(whole, opt(seq(lit("."), textOf(DIGITS, 1, 6))));
    case "boolean":
      return alt(lit("true"), lit("false"));
    default:
      return jsonString(120);
  }
}

/** A worker's `args`: every required field of its input but `task`, in the schema's order. */
function argsOf(worker: WorkerShape): Grammar {
  const required = (worker.input.required ?? []).filter((key) => key !== "task");
  const fields = required.map((key, i) =>
    seq(
      lit(`${i ? ", " : ""}${JSON.stringify(key)}: `),
      jsonValue(worker.input.properties?.[key] ?? {}),
    ),
  );
  return seq(lit("{"), ...fields, lit("}"));
}

/**
 * The decomposer's reply: subtasks whose workers are the registered ones and whose `args` fit
 * the chosen worker's input schema. A worker that needs args has a subtask of its own; two
 * workers that need none may cross-check one subtask.
 */
export function subtasksGrammar(workers: WorkerShape[], maxSubtasks: number): Grammar {
  const known = workers.length > 0 ? workers : [{ name: "pandas", input: {} }];
  const max = Math.max(1, Math.min(3, maxSubtasks));
  const sid = seq(lit('"s'), textOf("123456789", 1, 1), lit('"'));
  const head = seq(lit('{"id": '), sid, lit(', "task": '), jsonString(200), lit(', "workers": '));
  const tail = (args: Grammar) =>
    seq(lit(', "dependsOn": '), jsonList(sid, 0, 2), lit(', "args": '), args, lit("}"));
  const needArgs = known.filter((w) => (w.input.required ?? []).some((key) => key !== "task"));
  const argless = known.filter((w) => !needArgs.includes(w));
  const name = (w: WorkerShape) => seq(lit('"'), lit(w.name), lit('"'));
  const choices = [
    ...(argless.length
      ? [seq(head, jsonList(alt(...argless.map(name)), 1, 2), tail(lit("{}")))]
      : []),
    ...needArgs.map((w) => seq(head, lit("["), name(w), lit("]"), tail(argsOf(w)))),
  ];
  return seq(lit('{"subtasks": '), jsonList(alt(...choices), 1, max), lit("}"));
}

/** A grammar a speaker built for its own reply, with a cap on the reply's tokens. */
export interface ReplyGrammar {
  grammar: Grammar;
  maxTokens: number;
}

/**
 * The grammar and token cap for a reply by `speaker` (to the user's `user`): the one it built
 * itself, else its own, if it has one.
 */
export function grammarFor(
  speaker: string,
  user: string,
  given?: ReplyGrammar,
): RoleGrammar | undefined {
  const made = ((): [Grammar, number] | undefined => {
    if (given) return [given.grammar, given.maxTokens];
    switch (speaker) {
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
  if (!made) return undefined;
  const [grammar, maxTokens] = made;
  return { role: speaker, grammar, gbnf: toGbnf(grammar), maxTokens };
}
