import type { AnswerType } from "./schemas.js";

const YES_NO_START =
  /^(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|shall)\b/i;
const NUMBER_ASK =
  /\b(how many|how much|what percentage|what percent|by how much|how (?:long|far|old|high|large|big|tall)|calculate|compute|what (?:is|was|are|were) the (?:total|average|mean|median|sum|difference|percentage|ratio|proportion|number|count|rate|increase|decrease|growth|change|combined|overall|standard deviation|variance|correlation coefficient|range|maximum|minimum|highest|lowest) (?:\w+ )?(?:of|in|between|for|number|value|score|per|across|from|among))/i;
const DATE_ASK =
  /\b(when|what year|which year|in what year|what date|which date|which month|what month)\b/i;
const LIST_ASK =
  /\b(list|top \d+|top ?(?:two|three|four|five|ten)|top\d|which (?:\w+ ){0,2}(?:are|were|have|had)\b|what are the|name all|all the \w+ (?:that|which|with))\b/i;
const ENTITY_ASK = /^(?:.*\b)?(which|who|whom|whose|what (?:is|was) the name|name the)\b/i;

/** Strips a leading "According to the table," and similar so the question's own verb leads. */
function core(question: string): string {
  return question
    .trim()
    .replace(
      /^(?:according to (?:the )?(?:table|data)|based on (?:the )?(?:table|data)|in the table)[,:]?\s*/i,
      "",
    )
    .trim();
}

/** What kind of answer a question asks for, from its wording. `text` when nothing fits. */
export function expectedAnswerType(question: string): AnswerType {
  const q = core(question);
  if (YES_NO_START.test(q) && !/\bor\b/i.test(q)) return "yesno";
  if (NUMBER_ASK.test(q)) return "number";
  if (DATE_ASK.test(q)) return "date";
  if (LIST_ASK.test(q)) return "list";
  if (ENTITY_ASK.test(q)) return "entity";
  return "text";
}

const YES_NO = /^(yes|no|true|false)$/i;
const NUMBER = /^[-+]?[$€£¥]?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*%?(?:\s*[a-z%]{1,12}\.?)?$/i;
const DATE =
  /^(?:\d{4}-\d{2}(?:-\d{2})?|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2},?)?(?:\s+\d{4})?)$/i;

/** The items of an answer: "a, b and c" has three; "1,062" is one number. */
export function answerItems(answer: string): string[] {
  return answer
    .split(/\s*;\s*|,(?!\d{3}(?!\d))\s*|\s+and\s+|\s*\n\s*/)
    .map((item) => item.trim())
    .filter(Boolean);
}

/** What kind of answer was given. */
export function actualAnswerType(answer: string): AnswerType {
  if (DATE.test(answer.trim())) return "date";
  const items = answerItems(answer);
  if (items.length === 0) return "text";
  if (items.length > 1) return "list";
  const only = items[0] ?? "";
  if (YES_NO.test(only)) return "yesno";
  if (DATE.test(only)) return "date";
  if (NUMBER.test(only)) return "number";
  return only.split(/\s+/).length <= 6 ? "entity" : "text";
}

/**
 * How well an answer's type fits the question: 2 fits, 1 plausible (a list where one value
 * was asked, a number where a date was, an entity where text was), 0 does not fit.
 */
export function typeScore(expected: AnswerType, actual: AnswerType): 0 | 1 | 2 {
  if (expected === actual || expected === "text") return 2;
  switch (expected) {
    case "number":
      return actual === "list" ? 1 : 0;
    case "yesno":
      return 0;
    case "date":
      // A year is a number as well as a date.
      if (actual === "number") return 2;
      return actual === "list" || actual === "entity" ? 1 : 0;
    case "list":
      return actual === "yesno" ? 0 : 2;
    case "entity":
      if (actual === "text" || actual === "date") return 2;
      return actual === "yesno" ? 0 : 1;
    default:
      return 1;
  }
}
