import { normalizeAnswer } from "./normalize.js";
import { numberCarried, parseNumber } from "./numbers.js";

/**
 * Whether two answers say the same: equal once normalized (as a vote compares them), or the same
 * number at the precision the less precise one states ("203" and "203.0", "45%" and "0.45").
 */
export function sameAnswer(a: string, b: string): boolean {
  if (normalizeAnswer(a) === normalizeAnswer(b)) return true;
  const x = parseNumber(a.trim());
  const y = parseNumber(b.trim());
  if (!x || !y) return false;
  const [coarse, fine] = x.places <= y.places ? [x, y] : [y, x];
  return numberCarried(coarse, fine, { rounding: true });
}

/** What an answer is worth to the search: how it stands against gold, or else the evidence and its peers. */
export interface RewardInput {
  answer: string;
  /** The checker's confidence in the answer (0-1), when it judged. */
  confidence: number | null;
  /** The other answers found so far. */
  peers: string[];
  gold: string | null;
}

/**
 * 1 or 0 by the gold answer when there is one. Otherwise half for the checker's confidence
 * (which only derivation from the table raises high) and half for agreement: the share of the
 * other answers that say the same (an answer alone agrees with itself). Without a check,
 * agreement alone.
 */
export function searchReward(input: RewardInput): number {
  if (input.gold !== null) return sameAnswer(input.answer, input.gold) ? 1 : 0;
  const agreement =
    input.peers.length === 0
      ? 1
      : input.peers.filter((peer) => sameAnswer(peer, input.answer)).length / input.peers.length;
  if (input.confidence === null) return agreement;
  return 0.5 * input.confidence + 0.5 * agreement;
}
