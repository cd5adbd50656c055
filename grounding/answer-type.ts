import type { AnswerType } from "../blackboard/schemas.js";
import { answerItems, isDate, isProse, leadingYesNo, YES_NO } from "./items.js";
import { parseNumber } from "./numbers.js";

/*
 * What kind of answer a question asks for, from its wording alone, and what kind an answer
 * is. A question is read at its last interrogative sentence ("X is defined as ... Which
 * country has the highest X?"), after lead-ins such as "According to the table," and
 * clauses such as "In 2001," or "If X rose by 10%,".
 */

const LEAD_IN =
  /^(?:(?:according to|based on|using|given|from|looking at|in the context of|considering)\b[^,?]*,|in the table,|in this table,)\s*/i;
const QUESTION_START =
  /^(?:how|what|which|who|whom|whose|when|where|why|(?:in|on|at|for|during|from|of|by|with|among) (?:which|what)|is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|list|name|give|find|identify|describe|explain|calculate|compute|estimate|forecast|predict|please)\b/i;
const CLAUSE_THEN_QUESTION =
  /,\s+((?:how|what|which|who|whom|whose|when|where|(?:in|on|at|for|during) (?:which|what)|is|are|was|were|does|do|did|can|could|will|would)\b.*)$/i;

/** The sentence that carries the question: the last one ending in "?", else the last one. */
export function focusQuestion(question: string): string {
  const sentences: string[] = [];
  for (const piece of question
    .replace(/\s+/g, " ")
    .trim()
    .split(/(?<=[.?!])\s+(?=[A-Z"'(])/)) {
    // "Calvin L. Rampton", "St. Louis": an initial or abbreviation does not end a sentence.
    const previous = sentences.at(-1);
    if (previous && /(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Mt|No|vs|Jr|Sr|Co|Inc|Ltd))\.$/.test(previous))
      sentences[sentences.length - 1] = `${previous} ${piece}`;
    else sentences.push(piece);
  }
  const asked = sentences.filter((s) => s.includes("?"));
  let focus = (asked.at(-1) ?? sentences.at(-1) ?? "").trim();
  for (let i = 0; i < 3 && LEAD_IN.test(focus); i++) focus = focus.replace(LEAD_IN, "");
  focus = focus.replace(/^[*"'\s]+/, "");
  if (!QUESTION_START.test(focus)) {
    const after = CLAUSE_THEN_QUESTION.exec(focus)?.[1];
    if (after) return after;
  }
  return focus;
}

const AUXILIARY =
  /^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|shall|may|might|must)\b/i;
const REQUEST = /^(?:can|could|would|will) you (?:please )?(?:(?:help (?:me )?)?(\w+))\b(?: me)?/i;
const LIST_VERBS = /^(?:list|name|enumerate|rank)$/i;
const NUMBER_VERBS = /^(?:calculate|compute|estimate|count|sum|total|quantify)$/i;

const NUMBER_START =
  /^(?:how (?:many|much|long|far|old|high|large|big|tall|heavy|fast|often)|by how (?:much|many)|(?:calculate|compute|estimate|count)\b|what (?:percentage|percent|proportion|share|fraction|amount)\b|what (?:can|could|might|would|will) (?:we |be |one )?(?:forecast|predict|expect|project|estimate)\w*)/i;
const NUMBER_NOUNS = [
  "total|average|mean|median|mode|sum|difference|percentage|percent|ratio|proportion|share",
  "number|count|rate|increase|decrease|growth|change|standard deviation|variance|range",
  "maximum|minimum|max|min|amount|value|score|points|population|price|cost|length|height",
  "weight|area|distance|duration|margin|gap|forecast|prediction|projection|estimate|cagr",
  "correlation coefficient|payout|ranking|rank|position|capacity|elevation|salary|budget",
  "temperature|speed|age|size|mass|volume|income|revenue|profit|gdp|density|frequency",
  "attendance|votes|turnover|index|quantity|tonnage|yield|output|expenditure|spending",
  "viewership|ratings?",
  "imports|exports|sales|emissions|earnings|wages|receipts|visits|visitors|arrivals|departures",
  "deaths|births|cases|consumption|production|investment|debt|deficit|surplus|taxes|spend",
  String.raw`(?:forecast(?:ed)?|predicted|projected|expected|estimated|likely|anticipated) [\w-]+`,
].join("|");
const NUMBER_WHAT = new RegExp(
  String.raw`^what(?:'s| is| was| are| were| will be| would be| might be| could be| should be)\s+(?:the\s+)?(?:[\w'’-]+\s+){0,3}?(?:${NUMBER_NOUNS})\b`,
  "i",
);
/** A second amount asked for in the same breath: "the mean and standard deviation". */
const SECOND_AMOUNT = new RegExp(
  String.raw`\band\s+(?:the\s+|its\s+|their\s+)?(?:[\w-]+\s+)?(?:${NUMBER_NOUNS})\b`,
  "i",
);
/** "what is the name / team / event of ...": a thing, not an amount, despite numbers later on. */
const THING_WHAT =
  /^what(?:'s| is| was| are| were)\s+(?:the\s+)?(?:name|title|event|team|country|player|city|place|person|location|role|type|kind|category|model|song|film|award|competition|venue|club|party|nation|region)\b/i;
const DATE_START =
  /^(?:when (?:did|was|were|is|are|does|do|will|has|had)\b|(?:in |during |on |by |for )?(?:what|which) (?:[\w-]+ )?(?:year|date|month|day|season|decade|time period|period|era)s?\b|what(?:'s| is| was) the (?:year|date|month|day|season|decade)\b|(?:in |during )?what year)/i;
const COMPOUND =
  /(?:,|\band\b|;)\s*(?:also\s+)?(?:what(?:'s)?|which|who|how|when|where|in (?:which|what)|is|are|was|were|does|did)\b[^?]*\?*\s*$|\band (?:its|their|the corresponding|the respective) \w+/i;
/** Anomalies, insights, correlations and the like want a conclusion, often with a figure. */
const ANALYSIS =
  /\b(?:anomal\w*|outliers?|unusual\w*|abnormal\w*|deviates?|deviating|insights?|main (?:features|columns|components|characteristics)|significance)\b/i;
/** "what is the impact of ...", "what is the relationship between ...": a conclusion. */
const PROSE_WHAT =
  /^what(?:'s| is| was| are| were| can be)\s+(?:the\s+)?(?:\w+\s+)?(?:impact|effect|influence|relationship|trend|pattern|insight|conclusion|observed|said)\b/i;
const PROSE_TOPIC =
  /\b(?:trends?|correlat\w*|impact|influence[sd]?|affects?|effects?|relationship|patterns?|causes?|causal\w*|drivers?)\b/i;
/** "Calculate X to determine which Y": the part after "to determine" is what is asked. */
const PURPOSE = /\bto (?:determine|identify|find(?: out)?|see|figure out|decide)\s+(.+)$/i;
const NUMBER_WORDS =
  /^(?:two|three|four|five|six|seven|eight|nine|ten|\d+|top\d*|several|all|both)$/i;
const NOUN_STOP =
  /^(?:has|have|had|is|are|was|were|did|do|does|won|scored|received|recorded|shows?|showed|exhibits?|in|of|with|from|for|among|on|by|that|whose|who|which|to|at|between|when|where|than|and|or|experienced|achieved|saw|ranked|finished)$/i;
const NOT_PLURAL = /(?:ss|us|is|ics|news|series|species|status|class)$/i;

/** Whether the noun after "which"/"what" asks for several things ("which 3 countries", "which teams"). */
function pluralTarget(rest: string): boolean {
  for (const word of rest.split(/\s+/).slice(0, 5)) {
    const bare = word.replace(/[^\w'-]/g, "");
    if (!bare) continue;
    if (NOUN_STOP.test(bare)) return false;
    // "which judge's scores": the owner is what is asked for.
    if (/'s$/i.test(bare)) return /s's$/i.test(bare);
    if (NUMBER_WORDS.test(bare) && !/^(?:1|one)$/i.test(bare)) return true;
    if (/(?:\(s\)|s)$/i.test(word.replace(/[?,.]+$/, "")) && !NOT_PLURAL.test(bare)) return true;
  }
  return false;
}

/** "the mean and standard deviation", "the number of X and the percentage": two values. */
function amounts(q: string): AnswerType {
  return SECOND_AMOUNT.test(q) && !/\bbetween\b/i.test(q) ? "list" : "number";
}

/** What kind of answer a question asks for, from its wording. `text` when nothing fits. */
export function expectedAnswerType(question: string): AnswerType {
  const whole = question.replace(/\s+/g, " ");
  let q = focusQuestion(question);

  const request = REQUEST.exec(q);
  if (request) {
    const verb = request[1] ?? "";
    if (/^(?:tell|find|determine|show|say)$/i.test(verb)) q = q.slice(request[0].length).trim();
    else if (LIST_VERBS.test(verb)) return "list";
    else if (NUMBER_VERBS.test(verb)) return "number";
    else return "text";
  }
  if (/^(?:please\s+)?(?:list|name all|enumerate|rank)\b/i.test(q)) return "list";
  if (/^(?:please\s+)?(?:describe|explain|analy[sz]e|summari[sz]e|discuss|compare)\b/i.test(q))
    return "text";
  if (ANALYSIS.test(q)) return "text";
  if (/\bcorrelat/i.test(whole) && !/^what(?:'s| is| was) the correlation coefficient\b/i.test(q))
    return "text";
  if (/\btrends?\b/i.test(q) && !NUMBER_START.test(q) && !NUMBER_WHAT.test(q)) return "text";
  if (/^how (?:does|do|did|has|have|is|are|was|were|might|could|would|will)\b/i.test(q))
    return "text";
  const purpose = PURPOSE.exec(q)?.[1];
  if (purpose && /^(?:which|who|whom|whose|what|the|identify|list|name)\b/i.test(purpose))
    return expectedAnswerType(/^the\b/i.test(purpose) ? `identify ${purpose}` : purpose);
  if (PROSE_WHAT.test(q)) return "text";

  if (AUXILIARY.test(q)) {
    // "Is X or Y larger?" asks which, not whether.
    if (/\bor\b/i.test(q) && !/\bor not\b/i.test(q)) return PROSE_TOPIC.test(q) ? "text" : "entity";
    return "yesno";
  }
  if (COMPOUND.test(q) && /^(?:what|which|who|how|when|where|in (?:which|what)|name)\b/i.test(q))
    return "list";
  if (NUMBER_START.test(q)) return amounts(q);
  if (DATE_START.test(q)) return "date";
  if (THING_WHAT.test(q)) return "entity";
  if (NUMBER_WHAT.test(q)) return amounts(q);
  if (
    /^(?:what|which)(?:'s| is| was| are| were)\s+(?:the\s+)?top\s*(?:\d+|two|three|four|five|ten)\b/i.test(
      q,
    )
  )
    return "list";
  if (/^what (?:are|were) the\b/i.test(q)) return "list";
  const which =
    /^(?:in |for |from |at |on |of |by |with |during |among )?(?:which|what)\s+(.*)$/i.exec(q);
  if (which) return pluralTarget(which[1] ?? "") ? "list" : "entity";
  if (/^(?:who|whom|whose|where)\b/i.test(q)) return "entity";
  if (/^(?:name|give|find|identify)\s+(?:the\s+)?(?:\w+\s+)?(?:\w+s)\b/i.test(q)) return "list";
  if (/^(?:name|find|identify)\b/i.test(q)) return "entity";
  if (/^(?:forecast|predict|project|estimate)\b/i.test(q)) return "number";
  return "text";
}

/** What kind of answer was given. */
export function actualAnswerType(answer: string): AnswerType {
  const text = answer.trim();
  if (!text) return "text";
  if (leadingYesNo(text)) return "yesno";
  if (isDate(text)) return "date";
  if (isProse(text)) return "text";
  const items = answerItems(text);
  if (items.length > 1) return "list";
  const only = items[0] ?? "";
  if (YES_NO.test(only)) return "yesno";
  if (isDate(only)) return "date";
  if (parseNumber(only)) return "number";
  return "entity";
}

/** Things that have names, never a bare number: what "which X" or "who" asks for. */
const NAMED_THING = new RegExp(
  String.raw`^(?:who|whom|whose)\b|^(?:in |for |from |of |by |with |among )?(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:${[
    "nation|country|countries|team|player|person|people|athlete|city|cities|town|village|club",
    "party|parties|driver|artist|singer|band|company|companies|state|province|region|county",
    "counties|school|university|universities|candidate|coach|manager|song|album|film|movie",
    "book|name|author|director|actor|actress|politician|member|continent|language|airline",
  ].join("|")})s?\b`,
  "i",
);
/** A number and nothing else: no unit, no word that could make it a name ("12 de octubre"). */
const BARE_NUMBER = /^[-+]?[$€£]?\d[\d,]*(?:\.\d+)?%?$/;

/**
 * The type score of an answer to a question: `typeScore`, except that a bare number given where
 * the question asks who or which named thing (a nation, a team, a person) is a misfit for sure,
 * not a plausible answer.
 */
export function judgeType(
  question: string,
  answer: string,
): { expected: AnswerType; actual: AnswerType; score: 0 | 1 | 2 } {
  const expected = expectedAnswerType(question);
  const actual = actualAnswerType(answer);
  const named =
    expected === "entity" &&
    BARE_NUMBER.test(answer.trim()) &&
    NAMED_THING.test(focusQuestion(question));
  return { expected, actual, score: named ? 0 : typeScore(expected, actual, answer) };
}

/**
 * How well an answer's type fits the question: 2 fits, 1 plausible (a list where one value
 * was asked, a number where a name was), 0 does not fit (a name where a number was asked,
 * anything but yes/no for a yes/no question). `answer` lets a sentence holding a number pass
 * as plausible for a number question.
 */
export function typeScore(expected: AnswerType, actual: AnswerType, answer = ""): 0 | 1 | 2 {
  if (expected === actual || expected === "text") return 2;
  switch (expected) {
    case "number":
      if (actual === "list" || actual === "date") return 1;
      return actual === "text" && /\d/.test(answer) ? 1 : 0;
    case "yesno":
      return 0;
    case "date":
      // A year is a number as well as a date.
      if (actual === "number") return 2;
      return actual === "list" || actual === "entity" ? 1 : 0;
    case "list":
      if (actual === "yesno") return 0;
      return actual === "text" ? 1 : 2;
    case "entity":
      if (actual === "text" || actual === "date") return 2;
      return actual === "yesno" ? 0 : 1;
    default:
      return 1;
  }
}
