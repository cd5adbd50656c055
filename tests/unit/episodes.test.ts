import { describe, expect, it } from "vitest";
import type { Verdict } from "../../blackboard/schemas.js";
import { episodeOutcome, isPlainLookup } from "../../nodes/archiver.js";
import { renderMemories } from "../../nodes/prompts.js";
import { decodeVector, encodeVector } from "../../storage/memory/embeddings.js";
import {
  addOrMerge,
  EPISODE_VERSION,
  type Episode,
  type EpisodeSummary,
  episodeVector,
  MAX_NOTES,
  memoryNamespace,
  mergeEpisode,
  questionPattern,
  summarizeEpisode,
  toMemory,
  userMemoryPrefix,
  withNotes,
} from "../../storage/memory/episodes.js";
import {
  columnKind,
  normalizeColumnName,
  schemaSimilarity,
  tableSchema,
} from "../../storage/memory/table-schema.js";
import {
  attempt,
  contradictedState,
  MEDALS_TABLE,
  reflection,
  solvedState,
  WORKING_CODE,
} from "../support/episodes.js";
import { answer, verdict } from "../support/verdicts.js";

describe("questionPattern", () => {
  it("masks numbers and quoted values, and keeps the rest of the question", () => {
    expect(questionPattern("How many goals did 'Liverpool' score in 2019?")).toBe(
      "How many goals did <value> score in <num>?",
    );
    expect(questionPattern('Total for "Real Madrid"  in 1,062.5 games (12.5%)')).toBe(
      "Total for <value> in <num> games (<num>)",
    );
    // Apostrophes inside words are not quotes; digits inside names are not numbers.
    expect(questionPattern("What's the team's best mp3 sale?")).toBe(
      "What's the team's best mp3 sale?",
    );
  });
});

describe("summarizeEpisode", () => {
  it("takes the pattern, the plan, the answer and the columns the working code used", () => {
    const summary = summarizeEpisode(solvedState(), "derived");
    expect(summary).toMatchObject({
      question: "How many gold medals did these 10 nations win in 2020?",
      pattern: "How many gold medals did these <num> nations win in <num>?",
      plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
      answer: "203",
      episodes: 1,
      verified: ["derived"],
      columns: [
        { name: "nation", type: "text" },
        { name: "gold", type: "number" },
        { name: "silver", type: "number" },
      ],
    });
    expect(summary.lessons).toEqual([
      "the answer came from the columns nation, gold",
      "the answer is a number",
    ]);
    expect(summary.pitfalls).toEqual(["KeyError: 'golds'"]);
    expect(summarizeEpisode(solvedState(), "derived")).toEqual(summary);
  });

  it("turns failed attempts, rejected answers and reflections into pitfalls and lessons", () => {
    const unparsable = { ...attempt("a3", ""), result: null, parseError: "no code block" };
    const summary = summarizeEpisode(
      solvedState({
        attempts: [
          attempt("a1", "x", "KeyError: 'golds'\nTraceback (most recent call last): ..."),
          unparsable,
          attempt("a4", "y", "KeyError: 'golds'"),
          attempt("a5", WORKING_CODE),
        ],
        checked: [
          {
            id: "c1",
            answer: answer("210"),
            verdict: verdict("210", { grounding: 0 }, ["210 is in no evidence"]),
          },
          { id: "c2", answer: answer("203"), verdict: verdict("203") },
        ],
        reflections: [
          reflection("r1", "The total included the header row.", ["Drop the total row first."]),
        ],
        verdict: { ...verdict("203"), expectedType: "list" },
      }),
      "derived",
    );
    expect(summary.pitfalls).toEqual([
      "The total included the header row.",
      'the answer "210" was rejected: 210 is in no evidence',
      "KeyError: 'golds'",
      "a reply had no runnable code",
    ]);
    expect(summary.lessons).toEqual([
      "Drop the total row first.",
      "the answer came from the columns nation, gold",
      "the answer is a list",
    ]);
  });

  it("needs no verdict when checking was off, and caps the notes", () => {
    const failures = Array.from({ length: 20 }, (_, i) =>
      attempt(`f${i}`, "x", `ValueError: problem number ${i} ${"x".repeat(400)}`),
    );
    const summary = summarizeEpisode(
      solvedState({ verdict: null, attempts: [...failures, attempt("ok", WORKING_CODE)] }),
      "matched-gold",
    );
    expect(summary.lessons).toEqual(["the answer came from the columns nation, gold"]);
    expect(summary.pitfalls).toHaveLength(MAX_NOTES);
    expect(summary.pitfalls[0]?.startsWith("ValueError: problem number 0 xxx")).toBe(true);
    expect(Math.max(...summary.pitfalls.map((p) => p.length))).toBeLessThanOrEqual(240);
  });

  it("keeps only what went wrong from a run known to be wrong, and says how it is known", () => {
    const rejected = verdict("15", { grounding: 0 }, ["15 is contradicted by a2:out1"]);
    const wrong = solvedState({
      answer: answer("15"),
      verdict: rejected,
      checked: [{ id: "c1", answer: answer("15"), verdict: rejected }],
    });
    expect(summarizeEpisode(wrong, "conflict")).toMatchObject({
      plan: [],
      lessons: [],
      answer: "",
      verified: ["conflict"],
      pitfalls: [
        'the answer "15" was rejected: 15 is contradicted by a2:out1',
        "KeyError: 'golds'",
      ],
    });
    const missed = summarizeEpisode(solvedState(), "missed-gold");
    expect(missed).toMatchObject({ plan: [], lessons: [], answer: "", verified: ["missed-gold"] });
    expect(missed.pitfalls).toEqual([
      'the answer "203" did not match the known answer',
      "KeyError: 'golds'",
    ]);
  });
});

describe("table schemas", () => {
  it("normalize column names and read dtypes as broad kinds", () => {
    expect(normalizeColumnName("  Gold_Medals ")).toBe("gold medals");
    expect(normalizeColumnName("Revenue / Q3")).toBe("revenue q3");
    expect(
      ["int64", "float64", "uint64", "DOUBLE", "DECIMAL(10,2)", "BIGINT"].map(columnKind),
    ).toEqual(Array(6).fill("number"));
    expect(["bool", "BOOLEAN"].map(columnKind)).toEqual(["boolean", "boolean"]);
    expect(["datetime64[ns]", "DATE", "TIMESTAMP"].map(columnKind)).toEqual(Array(3).fill("date"));
    expect(["object", "string", "VARCHAR"].map(columnKind)).toEqual(Array(3).fill("text"));
    // Several tables: each name once, the first table's kind kept.
    const twice = tableSchema([
      { columns: [{ name: "Nation", dtype: "object" }] },
      {
        columns: [
          { name: "nation", dtype: "int64" },
          { name: "Year", dtype: "int64" },
        ],
      },
    ]);
    expect(twice).toEqual([
      { name: "nation", type: "text" },
      { name: "year", type: "number" },
    ]);
  });

  it("compare by the Jaccard index of their names, a type mismatch counting half", () => {
    const medals = tableSchema([MEDALS_TABLE]);
    const olympics = tableSchema([
      {
        columns: ["rank", "nation", "gold", "silver", "bronze", "total"].map((name) => ({
          name,
          dtype: name === "nation" ? "object" : "int64",
        })),
      },
    ]);
    const sales = tableSchema([
      {
        columns: [
          { name: "city", dtype: "object" },
          { name: "amount", dtype: "int64" },
        ],
      },
    ]);
    expect(schemaSimilarity(medals, medals)).toBe(1);
    expect(schemaSimilarity(medals, olympics)).toBe(0.5);
    expect(schemaSimilarity(olympics, medals)).toBe(0.5);
    expect(schemaSimilarity(medals, sales)).toBe(0);
    const textGold = medals.map((c) => (c.name === "gold" ? { ...c, type: "text" as const } : c));
    expect(schemaSimilarity(medals, textGold)).toBeCloseTo(2.5 / 3, 12);
    expect(schemaSimilarity([], [])).toBe(0);
  });
});

const stored = (over: Partial<Episode> = {}): Episode => ({
  version: EPISODE_VERSION,
  columns: [{ name: "gold", type: "number" }],
  verified: ["derived"],
  question: "How many gold medals did these ten nations win in total?",
  pattern: "How many gold medals did these ten nations win in total?",
  plan: ["Sum the gold column."],
  lessons: ["the answer came from the columns gold"],
  pitfalls: ["KeyError: 'golds'"],
  answer: "203",
  episodes: 3,
  embedding: encodeVector([1, 0]),
  embedder: "offline-hash-v2:256",
  ...over,
});

const newer = (over: Partial<EpisodeSummary> = {}): EpisodeSummary => ({
  columns: [
    { name: "nation", type: "text" },
    { name: "gold", type: "number" },
  ],
  verified: ["matched-gold"],
  question: "How many gold medals did China win in total?",
  pattern: "How many gold medals did China win in total?",
  plan: ["Filter to China.", "Sum gold."],
  lessons: ["filter the nation first", "the answer came from the columns gold"],
  pitfalls: [],
  answer: "38",
  episodes: 1,
  ...over,
});

describe("mergeEpisode", () => {
  it("evolves an entry: the newer plan and answer, notes merged without repeats, one more episode", () => {
    const merged = mergeEpisode(stored(), newer());
    expect(merged.plan).toEqual(["Filter to China.", "Sum gold."]);
    expect(merged.answer).toBe("38");
    expect(merged.lessons).toEqual([
      "filter the nation first",
      "the answer came from the columns gold",
    ]);
    expect(merged.pitfalls).toEqual(["KeyError: 'golds'"]);
    expect(merged.episodes).toBe(4);
    // The columns go with the plan; the ways its episodes were verified accumulate.
    expect(merged.columns).toEqual(newer().columns);
    expect(merged.verified).toEqual(["derived", "matched-gold"]);
    // The entry keeps what it is matched on.
    expect(merged.question).toBe(stored().question);
    expect(merged.embedding).toBe(stored().embedding);
  });

  it("keeps the old plan when the newer episode has none, and caps the notes", () => {
    const many = Array.from({ length: 12 }, (_, i) => `lesson ${i}`);
    const merged = mergeEpisode(
      stored({ lessons: many }),
      newer({ plan: [], lessons: ["new"], verified: ["conflict"] }),
    );
    expect(merged.plan).toEqual(["Sum the gold column."]);
    expect(merged.columns).toEqual(stored().columns);
    expect(merged.verified).toEqual(["derived", "conflict"]);
    expect(merged.lessons).toHaveLength(MAX_NOTES);
    expect(merged.lessons[0]).toBe("new");
  });
});

describe("withNotes", () => {
  it("puts a model's notes before the run's own, without repeats", () => {
    const summary = withNotes(newer({ pitfalls: ["KeyError: 'x'"] }), {
      lessons: ["Sum after filtering", "filter the nation first"],
      pitfalls: ["  Forgot   the filter "],
    });
    expect(summary.lessons).toEqual([
      "Sum after filtering",
      "filter the nation first",
      "the answer came from the columns gold",
    ]);
    expect(summary.pitfalls).toEqual(["Forgot the filter", "KeyError: 'x'"]);
  });
});

describe("addOrMerge", () => {
  it("adds when no neighbour is within the threshold, else merges into the nearest", () => {
    expect(addOrMerge([], 0.85)).toEqual({ action: "add" });
    expect(addOrMerge([{ key: "a", similarity: 0.84 }], 0.85)).toEqual({ action: "add" });
    expect(addOrMerge([{ key: "a", similarity: 0.85 }], 0.85)).toEqual({
      action: "merge",
      key: "a",
    });
    const neighbours = [
      { key: "a", similarity: 0.86 },
      { key: "b", similarity: 0.97 },
      { key: "c", similarity: 0.2 },
    ];
    expect(addOrMerge(neighbours, 0.85)).toEqual({ action: "merge", key: "b" });
    expect(addOrMerge(neighbours, 0.99)).toEqual({ action: "add" });
  });

  it("still adds while at most `few` entries are near", () => {
    const one = [
      { key: "a", similarity: 0.9 },
      { key: "c", similarity: 0.5 },
    ];
    expect(addOrMerge(one, 0.85, 1)).toEqual({ action: "add" });
    const two = [...one, { key: "b", similarity: 0.95 }];
    expect(addOrMerge(two, 0.85, 1)).toEqual({ action: "merge", key: "b" });
  });
});

describe("recalled memories", () => {
  it("are rendered for the planner with their plan, lessons and pitfalls", () => {
    const text = renderMemories([toMemory("k1", ["tableminds", "memories", "x"], stored(), 0.9)]);
    expect(text.split("\n")[0]).toBe(
      "Lessons from similar past questions (use what applies; the table may differ):",
    );
    expect(text).toContain("1. A similar question (3 seen): How many gold medals");
    expect(text).toContain("Plan that worked: (1) Sum the gold column.");
    expect(text).toContain("Lesson: the answer came from the columns gold");
    expect(text).toContain("Pitfall: KeyError: 'golds'");
    expect(renderMemories([])).toBe("");
  });

  it("come from a namespace store labels can hold, and vectors read back in both forms", () => {
    expect(memoryNamespace("team.data:2024")).toEqual([
      "tableminds",
      "memories",
      "team~ddata~c2024",
    ]);
    // No two names share a namespace: "ann.lee" is not "ann_lee", "ann/x" is not under "ann".
    const names = ["ann.lee", "ann_lee", "ann:lee", "ann~dlee", "ann~lee"];
    const spaces = names.map((n) => memoryNamespace(n).join("\u0000"));
    expect(new Set(spaces).size).toBe(names.length);
    expect(userMemoryPrefix("ann/x")).toBe("ann~sx/");
    expect(`${userMemoryPrefix("ann/x")}medals`.startsWith(userMemoryPrefix("ann"))).toBe(false);
    expect(userMemoryPrefix("ann.lee")).not.toBe(userMemoryPrefix("ann_lee"));
    expect(Array.from(episodeVector(stored({ embedding: encodeVector([0.5, -0.25]) })))).toEqual([
      0.5, -0.25,
    ]);
    expect(episodeVector(stored({ embedding: [0.1, 0.2] }))).toEqual([0.1, 0.2]);
    expect(() => decodeVector("AAA=")).toThrow(/whole number of floats/);
  });
});

describe("episodeOutcome: memory learns only from verified runs", () => {
  const conflicted = (final: string) => contradictedState(final);

  it("counts a pass only when its support is derived, or looked up for a plain lookup", () => {
    expect(episodeOutcome(solvedState())).toBe("derived");
    // Issue 21: "[1] 10 gold medals ... [6] 15 gold medals" passed on a value that merely occurs.
    const by = (support: Verdict["support"], question = solvedState().question) =>
      episodeOutcome(solvedState({ question, verdict: { ...verdict("203"), support } }));
    expect(by("derived")).toBe("derived");
    expect(by("coincidental")).toBeNull();
    expect(by("none")).toBeNull();
    expect(by("looked-up", "How many gold medals did Japan win?")).toBe("looked-up");
    expect(by("looked-up", "Which nation won the most silver medals?")).toBeNull();
    expect(by("looked-up", "What is the total of the gold column?")).toBeNull();
  });

  it("counts a failure only on a concrete contradiction, never a run that merely did not pass", () => {
    expect(episodeOutcome(conflicted("15"))).toBe("conflict");
    const unsupported = conflicted("15");
    unsupported.claims = unsupported.claims.map((c) => ({ ...c, status: "unsupported" }));
    expect(episodeOutcome(unsupported)).toBeNull();
    // A contradicted claim of another verdict is not this one's.
    expect(
      episodeOutcome({ ...conflicted("15"), verdict: verdict("15", { grounding: 1 }) }),
    ).toBeNull();
    // Unchecked, or a verdict about another answer: not known either way.
    expect(episodeOutcome(solvedState({ verdict: null }))).toBeNull();
    expect(episodeOutcome(solvedState({ verdict: verdict("210") }))).toBeNull();
    expect(episodeOutcome(solvedState({ answer: null }))).toBeNull();
  });

  it("goes by the gold answer when the caller knows it, whatever the check said", () => {
    expect(episodeOutcome({ ...solvedState({ verdict: null }), gold: "203.0" })).toBe(
      "matched-gold",
    );
    expect(episodeOutcome({ ...solvedState(), gold: "210" })).toBe("missed-gold");
    expect(episodeOutcome({ ...conflicted("15"), gold: "15" })).toBe("matched-gold");
    expect(episodeOutcome({ ...solvedState(), gold: null })).toBe("derived");
    expect(episodeOutcome({ ...solvedState(), gold: " " })).toBe("derived");
  });

  it("reads plain lookups from the question's focus", () => {
    expect(isPlainLookup("What is the capital of Norway?")).toBe(true);
    expect(isPlainLookup("How many gold medals did Japan win?")).toBe(true);
    expect(isPlainLookup("Which nation won the fewest bronze medals?")).toBe(false);
    expect(isPlainLookup("Which is the largest planet?")).toBe(false);
    expect(isPlainLookup("What is the average atomic mass of the noble gases?")).toBe(false);
    expect(isPlainLookup("Did Japan win more golds than China?")).toBe(false);
    expect(isPlainLookup("What is the interest paid in 2001?")).toBe(true);
  });
});
