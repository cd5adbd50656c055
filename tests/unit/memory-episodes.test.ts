import { describe, expect, it } from "vitest";
import { maskValues, OFFLINE_DIMS, offlineEmbed } from "../../tools/memory/embeddings.js";
import {
  addOrMerge,
  type Episode,
  memoryNamespace,
  mergeEpisode,
  questionPattern,
  renderMemories,
  toMemory,
} from "../../tools/memory/episodes.js";
import { cosine } from "../../tools/memory/sqlite-store.js";

describe("the offline embedding", () => {
  it("is deterministic, normalized and of fixed size", () => {
    const a = offlineEmbed("How many gold medals did Japan win?");
    expect(a).toHaveLength(OFFLINE_DIMS);
    expect(offlineEmbed("How many gold medals did Japan win?")).toEqual(a);
    expect(Math.sqrt(a.reduce((s, v) => s + v * v, 0))).toBeCloseTo(1, 10);
    expect(offlineEmbed("")).toEqual(new Array(OFFLINE_DIMS).fill(0));
  });

  it("puts questions of one shape close and unrelated ones far", () => {
    const q = (text: string) => offlineEmbed(text);
    const gold = q("How many gold medals did the nations win in 2020?");
    const silver = q("How many silver medals did the nations win in 2016?");
    const rivers = q("Which river has the largest drainage basin?");
    expect(cosine(gold, silver)).toBeGreaterThan(0.6);
    expect(cosine(gold, rivers)).toBeLessThan(0.3);
    expect(cosine(gold, silver)).toBeGreaterThan(cosine(gold, rivers));
  });

  it("masks numbers and quoted values", () => {
    expect(maskValues('Total for "Real Madrid" in 1,062.5 games')).toBe(
      "total for  <value>  in  <num>  games",
    );
    expect(questionPattern("How many goals did 'Liverpool' score in 2019?")).toBe(
      "how many goals did <value> score in <num> ?",
    );
  });
});

const episode = (over: Partial<Episode> = {}): Episode => ({
  question: "How many gold medals did these ten nations win in total?",
  pattern: "how many gold medals did these ten nations win in total?",
  plan: ["Sum the gold column."],
  lessons: ["the answer came from the columns gold"],
  pitfalls: ["KeyError: 'golds'"],
  answer: "203",
  episodes: 1,
  embedding: [1, 0],
  embedder: "offline-hash-v1:256",
  ...over,
});

describe("archiving decisions", () => {
  it("adds when no neighbour is within the threshold, else merges into the nearest", () => {
    expect(addOrMerge([], 0.85)).toEqual({ action: "add" });
    expect(addOrMerge([{ key: "a", similarity: 0.84 }], 0.85)).toEqual({ action: "add" });
    expect(
      addOrMerge(
        [
          { key: "a", similarity: 0.86 },
          { key: "b", similarity: 0.97 },
          { key: "c", similarity: 0.2 },
        ],
        0.85,
      ),
    ).toEqual({ action: "merge", key: "b" });
  });

  it("evolves an entry: the newer plan, notes merged without repeats, one more episode", () => {
    const {
      embedding: _e,
      embedder: _m,
      ...newer
    } = episode({
      plan: ["Filter to 2020.", "Sum gold."],
      lessons: ["filter the year first", "the answer came from the columns gold"],
      pitfalls: [],
      answer: "99",
    });
    const merged = mergeEpisode(episode(), newer);
    expect(merged.plan).toEqual(["Filter to 2020.", "Sum gold."]);
    expect(merged.lessons).toEqual([
      "filter the year first",
      "the answer came from the columns gold",
    ]);
    expect(merged.pitfalls).toEqual(["KeyError: 'golds'"]);
    expect(merged.episodes).toBe(2);
    expect(merged.embedding).toEqual([1, 0]);
    expect(merged.question).toBe(episode().question);
  });

  it("renders recalled memories for the planner and names namespaces safely", () => {
    const text = renderMemories([toMemory("k1", ["tableminds", "memories", "x"], episode(), 0.9)]);
    expect(text).toContain("Lessons from similar past questions");
    expect(text).toContain("Plan that worked: (1) Sum the gold column.");
    expect(text).toContain("Pitfall: KeyError: 'golds'");
    expect(renderMemories([])).toBe("");
    expect(memoryNamespace("team.data:2024")).toEqual(["tableminds", "memories", "team_data_2024"]);
  });
});
