import { createHash } from "node:crypto";
import os from "node:os";
import { Embeddings } from "@langchain/core/embeddings";

export const OFFLINE_DIMS = 256;
export const OFFLINE_ID = `offline-hash-v2:${OFFLINE_DIMS}`;

/** Feature weights: the shape of a question counts more than the names in it. */
const WEIGHT = { word: 1, bigram: 1, trigram: 0.3, name: 0.25, nameTrigram: 0.08 };

const QUOTED = /(^|[\s([{,:;])(?:"[^"\n]+"|“[^”\n]+”|‘[^’\n]+’|'[^'\n]+'(?=$|[\s)\]},.;:!?]))/gu;
const NUMBER = /(?<![\p{L}\p{N}_.])\d+(?:[.,]\d+)*%?/gu;

/**
 * Numbers and quoted values say little about what kind of question it is: each becomes
 * `<num>` or `<value>`. An apostrophe inside a word ("team's") is not a quote.
 */
export function maskValues(text: string): string {
  return text
    .replace(QUOTED, (_match, before: string) => `${before}<value>`)
    .replace(NUMBER, "<num>");
}

interface Unit {
  /** What bigrams see: the lowercased word, or a placeholder. */
  token: string;
  /** The words a placeholder stands for (names keep a little of their weight). */
  words: string[];
}

/**
 * Words, with numbers and quoted values as placeholders and each run of capitalized words
 * that does not start a sentence ("did United States win") as one `<name>`.
 */
function units(text: string): Unit[] {
  const out: Unit[] = [];
  let sentenceStart = true;
  for (const match of maskValues(text).matchAll(/<value>|<num>|[\p{L}\p{N}]+|[.?!;]/gu)) {
    const word = match[0];
    if (/^[.?!;]$/.test(word)) {
      sentenceStart = true;
      continue;
    }
    const isName = !sentenceStart && !word.startsWith("<") && /^\p{Lu}/u.test(word);
    sentenceStart = false;
    const last = out.at(-1);
    if (isName && last?.token === "<name>") last.words.push(word.toLowerCase());
    else if (isName) out.push({ token: "<name>", words: [word.toLowerCase()] });
    else out.push({ token: word.startsWith("<") ? word : word.toLowerCase(), words: [] });
  }
  return out;
}

function bucket(feature: string): { index: number; sign: number } {
  const digest = createHash("md5").update(feature).digest();
  return { index: digest.readUInt32LE(0) % OFFLINE_DIMS, sign: (digest[4] ?? 0) & 1 ? 1 : -1 };
}

function trigrams(word: string): string[] {
  const padded = `#${word}#`;
  const out: string[] = [];
  for (let j = 0; j + 3 <= padded.length; j++) out.push(padded.slice(j, j + 3));
  return out;
}

/**
 * A deterministic embedding that needs no server: word unigrams and bigrams and character
 * trigrams, hashed into a fixed number of signed buckets and L2-normalized. Numbers, quoted
 * values and names are placeholders (names keep a light trace of their words), so "How
 * many gold medals did Japan win?" lands next to "How many gold medals did China win?".
 */
export function offlineEmbed(text: string): number[] {
  const vector = new Array<number>(OFFLINE_DIMS).fill(0);
  const add = (feature: string, weight: number) => {
    const { index, sign } = bucket(feature);
    vector[index] = (vector[index] ?? 0) + sign * weight;
  };
  units(text).forEach((unit, i, all) => {
    add(`w:${unit.token}`, WEIGHT.word);
    const previous = all[i - 1];
    if (previous) add(`b:${previous.token} ${unit.token}`, WEIGHT.bigram);
    if (!unit.token.startsWith("<"))
      for (const t of trigrams(unit.token)) add(`c:${t}`, WEIGHT.trigram);
    for (const word of unit.words) {
      add(`w:${word}`, WEIGHT.name);
      for (const t of trigrams(word)) add(`c:${t}`, WEIGHT.nameTrigram);
    }
  });
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}

export class OfflineEmbeddings extends Embeddings {
  readonly id = OFFLINE_ID;

  constructor() {
    super({});
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return documents.map(offlineEmbed);
  }

  async embedQuery(document: string): Promise<number[]> {
    return offlineEmbed(document);
  }
}

/** An embedder and the id stored beside its vectors, so vectors of different embedders never mix. */
export interface Embedder {
  id: string;
  /** True for the offline embedding: cheap enough to embed stored texts again. */
  offline: boolean;
  embeddings: Embeddings;
}

/**
 * A vector as stored in an episode: float32, little-endian, base64. A dense endpoint vector
 * takes about a quarter of its JSON and decodes without a parse.
 */
export function encodeVector(vector: ArrayLike<number>): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes.toString("base64");
}

const LITTLE_ENDIAN = os.endianness() === "LE";

export function decodeVector(encoded: string): Float32Array {
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.length % 4 !== 0) throw new Error("a stored vector is not a whole number of floats");
  if (LITTLE_ENDIAN) {
    // A copy into a fresh buffer: the decoded bytes need not be 4-byte aligned.
    const aligned = new Uint8Array(bytes.length);
    aligned.set(bytes);
    return new Float32Array(aligned.buffer);
  }
  const floats = new Float32Array(bytes.length / 4);
  for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * 4);
  return floats;
}
