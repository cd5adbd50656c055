import { describe, expect, it } from "vitest";
import { renderMemories } from "../../nodes/prompts.js";
import { decodeVector, encodeVector } from "../../tools/memory/embeddings.js";
import {
  addOrMerge,
  type Episode,
  type EpisodeSummary,
  episodeVector,
  MAX_NOTES,
  memoryNamespace,
  mergeEpisode,
  questionPattern,
  summarizeEpisode,
  toMemory,
  withNotes,
} from "../../tools/memory/episodes.js";
import { attempt, reflection, solvedState, WORKING_CODE } from "../support/episodes.js";
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
    const summary = summarizeEpisode(solvedState());
    expect(summary).toMatchObject({
      question: "How many gold medals did these 10 nations win in 2020?",
      pattern: "How many gold medals did these <num> nations win in <num>?",
      plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
      answer: "203",
      episodes: 1,
    });
    expect(summary.lessons).toEqual([
      "the answer came from the columns nation, gold",
      "the answer is a number",
    ]);
    expect(summary.pitfalls).toEqual(["KeyError: 'golds'"]);
    expect(summarizeEpisode(solvedState())).toEqual(summary);
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
    );
    expect(summary.lessons).toEqual(["the answer came from the columns nation, gold"]);
    expect(summary.pitfalls).toHaveLength(MAX_NOTES);
    expect(summary.pitfalls[0]?.startsWith("ValueError: problem number 0 xxx")).toBe(true);
    expect(Math.max(...summary.pitfalls.map((p) => p.length))).toBeLessThanOrEqual(240);
  });
});

const stored = (over: Partial<Episode> = {}): Episode => ({
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
    // The entry keeps what it is matched on.
    expect(merged.question).toBe(stored().question);
    expect(merged.embedding).toBe(stored().embedding);
  });

  it("keeps the old plan when the newer episode has none, and caps the notes", () => {
    const many = Array.from({ length: 12 }, (_, i) => `lesson ${i}`);
    const merged = mergeEpisode(stored({ lessons: many }), newer({ plan: [], lessons: ["new"] }));
    expect(merged.plan).toEqual(["Sum the gold column."]);
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
    expect(memoryNamespace("team.data:2024")).toEqual(["tableminds", "memories", "team_data_2024"]);
    expect(Array.from(episodeVector(stored({ embedding: encodeVector([0.5, -0.25]) })))).toEqual([
      0.5, -0.25,
    ]);
    expect(episodeVector(stored({ embedding: [0.1, 0.2] }))).toEqual([0.1, 0.2]);
    expect(() => decodeVector("AAA=")).toThrow(/whole number of floats/);
  });
});
