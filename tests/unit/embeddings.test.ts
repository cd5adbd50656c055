import { describe, expect, it } from "vitest";
import { ModelConfigError } from "../../models/config.js";
import { createEmbedder } from "../../models/embeddings.js";
import {
  decodeVector,
  encodeVector,
  maskValues,
  OFFLINE_DIMS,
  OFFLINE_ID,
  OfflineEmbeddings,
  offlineEmbed,
} from "../../storage/memory/embeddings.js";
import { cosine } from "../../storage/memory/sqlite-store.js";

const similarity = (a: string, b: string) => cosine(offlineEmbed(a), offlineEmbed(b));

describe("the offline embedding", () => {
  it("is deterministic, L2-normalized and of a fixed size", async () => {
    const a = offlineEmbed("How many gold medals did Japan win?");
    expect(a).toHaveLength(OFFLINE_DIMS);
    expect(offlineEmbed("How many gold medals did Japan win?")).toEqual(a);
    expect(Math.sqrt(a.reduce((s, v) => s + v * v, 0))).toBeCloseTo(1, 10);
    expect(offlineEmbed("")).toEqual(new Array(OFFLINE_DIMS).fill(0));
    const embeddings = new OfflineEmbeddings();
    expect(await embeddings.embedQuery("How many gold medals did Japan win?")).toEqual(a);
    expect(await embeddings.embedDocuments(["x", "How many gold medals did Japan win?"])).toEqual([
      offlineEmbed("x"),
      a,
    ]);
  });

  it("puts questions of one shape about other names or numbers next to each other", () => {
    expect(
      similarity("How many gold medals did Japan win?", "How many gold medals did China win?"),
    ).toBeGreaterThan(0.95);
    expect(
      similarity("What was the total revenue in 2019?", "What was the total revenue in 2021?"),
    ).toBeCloseTo(1, 10);
    expect(
      similarity(
        "What is the total number of goals scored by 'Real Madrid'?",
        'What is the total number of goals scored by "Barcelona"?',
      ),
    ).toBeCloseTo(1, 10);
  });

  it("scores similar questions above related ones, and those above unrelated ones", () => {
    const q = "How many gold medals did Japan win?";
    const same = similarity(q, "How many gold medals did the United States win?");
    const related = similarity(q, "How many silver medals did Japan win?");
    const unrelated = similarity(q, "Which river has the largest drainage basin?");
    expect(same).toBeGreaterThan(related);
    expect(related).toBeGreaterThan(0.5);
    expect(unrelated).toBeLessThan(0.2);
    expect(
      similarity("Which team scored the most goals?", "Which river is the longest?"),
    ).toBeLessThan(
      similarity("Which team scored the most goals?", "Which player scored the most points?"),
    );
  });

  it("keeps a trace of names, and takes a capitalized first word for a word", () => {
    const q = "How many gold medals did Japan win?";
    expect(similarity(q, "How many gold medals did China win?")).toBeLessThan(1 - 1e-6);
    // The first word of a sentence is capitalized anyway: it counts in full.
    expect(similarity("Japan won the most medals?", "China won the most medals?")).toBeLessThan(
      similarity("Did Japan win the most medals?", "Did China win the most medals?") - 0.1,
    );
    expect(similarity("Rank them. Japan won?", "Rank them. China won?")).toBeLessThan(
      similarity("Rank them and Japan won?", "Rank them and China won?"),
    );
  });
});

describe("maskValues", () => {
  it("masks quoted values and numbers, not apostrophes", () => {
    expect(maskValues("What's the team's total in 'Group A' and \"B\"?")).toBe(
      "What's the team's total in <value> and <value>?",
    );
    expect(maskValues("Rank 3 to 12 of 1,062.5 (3.5%)")).toBe(
      "Rank <num> to <num> of <num> (<num>)",
    );
  });
});

describe("stored vectors", () => {
  it("round-trip through base64 float32", () => {
    const v = offlineEmbed("How many gold medals did Japan win?");
    const back = decodeVector(encodeVector(v));
    expect(back).toHaveLength(OFFLINE_DIMS);
    expect(cosine(back, v)).toBeCloseTo(1, 6);
    // An endpoint's dense vector takes a fraction of its JSON.
    const dense = Array.from({ length: 1536 }, (_, i) => Math.sin(i) / 40);
    expect(encodeVector(dense).length).toBeLessThan(JSON.stringify(dense).length / 3);
    expect(cosine(decodeVector(encodeVector(dense)), dense)).toBeCloseTo(1, 6);
  });
});

describe("createEmbedder", () => {
  it("is offline without a model, and names the endpoint model otherwise", () => {
    const offline = createEmbedder(undefined);
    expect(offline).toMatchObject({ id: OFFLINE_ID, offline: true });
    expect(offline.embeddings).toBeInstanceOf(OfflineEmbeddings);
    const env = { ...process.env };
    try {
      process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/v1";
      process.env.OPENAI_API_KEY = "none";
      expect(createEmbedder("text-embedding-3-small")).toMatchObject({
        id: "openai:text-embedding-3-small",
        offline: false,
      });
      delete process.env.OPENAI_BASE_URL;
      delete process.env.OPENAI_API_KEY;
      expect(() => createEmbedder("text-embedding-3-small")).toThrow(ModelConfigError);
    } finally {
      process.env = env;
    }
  });
});
