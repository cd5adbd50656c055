import type {
  CodeResult,
  Evidence,
  ExecError,
  ExecResult,
  TableRef,
} from "../blackboard/schemas.js";
import type { Configuration } from "../settings/configuration.js";
import { WorkCache } from "../storage/bounded-cache.js";
import { contextNumbers, type PrivateMode, privateContext } from "./privacy-context.js";
import { tableFacts } from "./privacy-facts.js";
import { CellScrubber, escapeRegExp, HIDDEN, numbersIn } from "./privacy-scrub.js";

/*
 * The privacy modes, in one place. Every prompt shows the tables, the code's output, errors,
 * earlier answers and notes made on this machine through a PromptPrivacy, and `ask`
 * (nodes/llm.ts) scrubs the finished prompt with it before it leaves:
 *
 * - `off`: everything, as before.
 * - `values`: column names, types and aggregates; of what the code printed only its result, and
 *   only when it is a number (not one a cell holds, unless the context shows it already) or a
 *   boolean; errors with their quoted values cut; earlier answers when they are numbers or yes/no.
 * - `schema`: names and types; nothing the code computed or printed, errors by their type,
 *   no earlier answer, no note made here.
 *
 * A result kept back is cited by its id (`Final Answer: [a1:result]`) and filled in here.
 */

export type PrivacyMode = Configuration["privacy"];
/** Least strict first. */
export const PRIVACY_MODES = ["off", "values", "schema"] as const satisfies readonly PrivacyMode[];

const rank = (mode: PrivacyMode) => PRIVACY_MODES.indexOf(mode);

/** The stricter of two modes. */
export function stricterPrivacy(a: PrivacyMode, b: PrivacyMode): PrivacyMode {
  return rank(a) >= rank(b) ? a : b;
}

/** Whether `mode` keeps at least as much at home as `floor`. */
export function atLeastAsStrict(mode: PrivacyMode, floor: PrivacyMode): boolean {
  return rank(mode) >= rank(floor);
}

const KEPT = "kept on this machine";
const QUOTED = /'([^'\n]{1,300})'|"([^"\n]{1,300})"/g;
/** Names an error message quotes that are Python's or pandas', never a table's. */
const TYPE_NAMES = new Set([
  "int",
  "float",
  "str",
  "bool",
  "object",
  "list",
  "dict",
  "tuple",
  "NoneType",
  "Series",
  "DataFrame",
  "Index",
  "int64",
  "float64",
  "datetime64[ns]",
  "Timestamp",
  "method",
  "function",
  "module",
]);

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A result's shape in words, for when its value is kept back. */
function shapeOf(result: CodeResult): string {
  const n = result.values.length;
  switch (result.kind) {
    case "scalar": {
      const value = result.values[0];
      if (typeof value === "number") return "a number";
      if (typeof value === "boolean") return "a boolean";
      if (value === null || value === undefined) return "None";
      return `a text of ${plural(value.length, "character")}`;
    }
    case "list":
      return `a list of ${plural(n, "value")}`;
    case "series":
      return `a series of ${plural(n, "value")}`;
    case "frame":
      return `a table of ${plural(n, "cell")}`;
  }
}

/** A value as an answer or a result states it: a number when it reads as one. */
function asNumber(text: string): number | null {
  const trimmed = text.trim().replace(/%$/, "");
  if (!/^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(trimmed)) return null;
  const n = Number(trimmed.replaceAll(",", ""));
  return trimmed && Number.isFinite(n) ? n : null;
}

function describeTable(value: TableRef, rows: boolean, names = (text: string) => text): string {
  // A table the code made may take its column names from cells (a pivot, a transposed row).
  const cols = names(value.columns.map((c) => c.name).join(", "));
  return rows
    ? `table \`${value.name}\` (${value.rows} rows; columns ${cols})`
    : `table \`${value.name}\` (columns ${cols})`;
}

/** What a prompt may show of a run, under one mode; see the comment at the top. */
export class PromptPrivacy {
  constructor(
    readonly mode: PrivacyMode,
    private readonly question: string = "",
    private readonly scrubber: CellScrubber | null = null,
    private readonly released: ReadonlySet<number> = new Set(),
    private readonly names: ReadonlySet<string> = new Set(),
  ) {}

  /** Whether a number may be shown: not a cell's own value, unless the mode shows it anyway. */
  private showsNumber(n: number): boolean {
    if (this.mode === "schema") return false;
    return this.released.has(n) || !(this.scrubber?.isCellNumber(n) ?? false);
  }

  /** Whether the value of the code's result is shown (else an answer cites it by its id). */
  showsResult(result: CodeResult): boolean {
    if (this.mode === "off") return true;
    if (this.mode === "schema" || result.kind !== "scalar") return false;
    const value = result.values[0];
    if (value === null || value === undefined || typeof value === "boolean") return true;
    const n = typeof value === "number" ? value : asNumber(value);
    return n !== null && this.showsNumber(n);
  }

  /** The code's result as a prompt shows it. */
  result(result: CodeResult): string {
    return this.showsResult(result) ? result.text : `(${KEPT}: ${shapeOf(result)})`;
  }

  /** What a prompt says of what a successful run printed. */
  output(exec: ExecResult): string {
    if (this.mode === "off") return exec.stdout.trim() || "(nothing printed)";
    const result = exec.result;
    if (this.mode === "values" && result && this.showsResult(result)) {
      return `${result.text}\n(Privacy: only the code's result is shown; the rest of what it printed stays on this machine.)`;
    }
    // No count of lines: a number here would read as a result.
    const what = result ? `its result is ${shapeOf(result)}` : "it computed no result";
    return `(${KEPT}: what the code printed; ${what})`;
  }

  /** What a failed run printed before it failed, or "" when the mode keeps it. */
  outputBeforeFailing(exec: ExecResult): string {
    return this.mode === "off" ? exec.stdout.trim().slice(0, 1000) : "";
  }

  /**
   * An error as `Type: message`. `values` cuts the quoted values that the code (which the
   * model wrote) does not hold and that are not names; `schema` keeps the type and the names
   * the message quotes from the code.
   */
  error(error: Pick<ExecError, "type" | "message">, code = ""): string {
    if (this.mode === "off") return `${error.type}: ${error.message}`;
    const known = (inner: string) =>
      code.includes(inner) || this.names.has(inner) || TYPE_NAMES.has(inner);
    if (this.mode === "schema") {
      const quoted = [...error.message.matchAll(QUOTED)]
        .map((m) => m[1] ?? m[2] ?? "")
        .filter(known);
      const names =
        quoted.length > 0 ? ` (it names ${quoted.map((q) => `'${q}'`).join(", ")})` : "";
      return `${error.type}${names}: its message is ${KEPT}`;
    }
    const message = error.message.replace(QUOTED, (whole, single?: string, double?: string) =>
      known(single ?? double ?? "") ? whole : `'${HIDDEN}'`,
    );
    return `${error.type}: ${this.strictly(message, code)}`;
  }

  /** An evidence packet's value as the evidence list shows it. */
  value(evidence: Evidence): string {
    const value = evidence.value;
    if (value !== null && typeof value === "object") {
      return describeTable(value, this.mode !== "schema", (names) => this.strictly(names));
    }
    if (this.mode === "off") return JSON.stringify(value);
    if (evidence.id.endsWith(":result") && this.mode === "values") {
      const n =
        typeof value === "number" ? value : typeof value === "string" ? asNumber(value) : null;
      const shown =
        typeof value === "boolean" || value === null || (n !== null && this.showsNumber(n));
      if (shown) return JSON.stringify(value);
    }
    return `(${KEPT})`;
  }

  /** An answer given earlier, as a later prompt shows it. */
  answer(text: string | null | undefined): string {
    if (this.mode === "off") return text ?? "(none)";
    if (!text?.trim()) return "(none)";
    if (this.mode === "schema") return `(an answer, ${KEPT})`;
    const trimmed = text.trim();
    if (/^(?:yes|no|true|false)$/i.test(trimmed) || this.names.has(trimmed)) return trimmed;
    const n = asNumber(text);
    if (n !== null) return this.showsNumber(n) ? text.trim() : `(a number, ${KEPT})`;
    return `(an answer of ${plural(text.trim().length, "character")}, ${KEPT})`;
  }

  /** Text made here with every cell it holds hidden, short ones and small numbers too. */
  private strictly(text: string, allowed = ""): string {
    if (this.mode === "off" || !this.scrubber) return text;
    const { question, released } = this;
    return this.scrubber.scrub(text, { question, released, strict: true, allowed });
  }

  /**
   * Notes made on this machine (a checker's issues, a memory's lessons, an error's message):
   * `values` shows them with every cell hidden, `schema` shows none.
   */
  notes(notes: readonly string[]): string[] {
    if (this.mode === "off") return [...notes];
    return this.mode === "schema" ? [] : notes.map((note) => this.strictly(note));
  }

  /** A note as it may be kept (in memory) under the mode: every cell hidden. */
  keptNote(note: string): string {
    return this.mode === "off" ? note : this.strictly(note);
  }

  /** `text` with the raw `answers` it holds shown as `answer` shows them. */
  shownAnswers(text: string, answers: readonly (string | null)[]): string {
    if (this.mode === "off") return text;
    let shown = text;
    for (const raw of answers) {
      const answer = raw?.trim();
      if (!answer || this.answer(answer) === answer) continue;
      const escaped = escapeRegExp(answer);
      const alone = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, "gu");
      shown = shown.replace(alone, () => this.answer(answer));
    }
    return shown;
  }

  /**
   * A final answer with the evidence it cites by id (`[a1:result]`) replaced by the value kept
   * here: the model could not see the value, so it names it.
   */
  fillAnswer(final: string, evidence: readonly Evidence[]): string {
    if (this.mode === "off") return final;
    const byId = new Map(evidence.map((e) => [e.id, e.value]));
    return final.replace(/\[([^\]\s]+)\]/g, (whole, id: string) => {
      const value = byId.get(id);
      if (value === undefined || (value !== null && typeof value === "object")) return whole;
      return value === null ? "None" : String(value);
    });
  }

  /** The line telling the model how to answer with a result it cannot see. */
  citeKept(id: string): string {
    return `The code's result stays on this machine. To answer with it, write its id in square brackets, e.g. "Final Answer: [${id}]": it is filled in here.`;
  }

  /** The finished prompt with every cell it still quotes hidden; the user's question stays. */
  scrub(prompt: string): string {
    if (this.mode === "off" || !this.scrubber) return prompt;
    return this.scrubber.scrub(prompt, { question: this.question, released: this.released });
  }
}

/** The privacy of a run with the mode `off`: everything shown. */
export const OPEN_PRIVACY = new PromptPrivacy("off");

interface Dictionary {
  scrubber: CellScrubber;
  released: ReadonlySet<number>;
  names: ReadonlySet<string>;
}

const dictionaries = new WorkCache<Dictionary>(16);

function dictionaryOf(tables: readonly TableRef[], mode: PrivateMode): Promise<Dictionary> {
  const key = JSON.stringify([mode, tables.map((t) => [t.sha256, t.name])]);
  return dictionaries.obtain(key, async () => {
    const all = await Promise.all(tables.map(tableFacts));
    const names = new Set(tables.flatMap((t) => [t.name, ...t.columns.map((c) => c.name)]));
    const released = new Set(mode === "values" ? all.flatMap(contextNumbers) : []);
    return {
      scrubber: new CellScrubber(
        all.flatMap((f) => f.texts),
        all.flatMap((f) => f.numbers),
        names,
      ),
      released,
      names,
    };
  });
}

/**
 * The privacy of a prompt about `question` over `tables` under `mode`. `off` reads nothing;
 * the other modes read each table once (its cells, for the scrub) and keep what they read.
 */
export async function privacyOf(
  run: { tables: readonly TableRef[]; question: string },
  mode: PrivacyMode,
): Promise<PromptPrivacy> {
  if (mode === "off") return OPEN_PRIVACY;
  const { scrubber, released, names } = await dictionaryOf(run.tables, mode);
  const withQuestion = new Set([...released, ...numbersIn(run.question)]);
  return new PromptPrivacy(mode, run.question, scrubber, withQuestion, names);
}

/** Tables as a prompt shows them under a mode other than `off`, sharing a budget of tokens. */
export async function privateTableContexts(
  tables: readonly TableRef[],
  mode: PrivateMode,
  budgetTokens: number,
): Promise<string[]> {
  // About three characters a token; each table gets an equal share.
  const share = Math.max(200, Math.floor((budgetTokens * 3) / Math.max(tables.length, 1)));
  return Promise.all(
    tables.map(async (ref) => privateContext(ref, await tableFacts(ref), mode, share)),
  );
}
