/*
 * A direction an answer claims in words: a trend that rises or falls, a correlation that is
 * positive or negative, or none at all. It is checked like a value: against the sign of the
 * number the code computed (a slope, a correlation, a change).
 */

const UP =
  /\b(?:increas\w*|rising|rises|rose|grow(?:s|ing|th)?|grew|upward\w*|positive(?:ly)?|gain(?:s|ed|ing)?)\b/i;
const DOWN =
  /\b(?:decreas\w*|declin\w*|falling|falls|fell|drop(?:s|ped|ping)?|downward\w*|negative(?:ly)?|shrink\w*|shrank)\b/i;
const NONE =
  /\b(?:no|little|negligible)\s+(?:clear\s+|significant\s+|apparent\s+|meaningful\s+)?(?:correlation|relationship|trend|impact)\b/i;
/** What a direction word must be said of to be a claim about the result. */
const SUBJECT = /\b(?:correlat\w*|relationship|trend\w*|impact|effect|change|slope|direction)\b/i;

/** +1, -1 or 0 for a rising, falling or absent direction the text claims; null when it claims none or both. */
export function claimedDirection(text: string): 1 | -1 | 0 | null {
  if (NONE.test(text)) return 0;
  if (!SUBJECT.test(text)) return null;
  const up = UP.test(text);
  const down = DOWN.test(text);
  if (up === down) return null;
  return up ? 1 : -1;
}

/** The words of the claim, for the check's item. */
export function directionWords(text: string): string {
  return (NONE.exec(text) ?? UP.exec(text) ?? DOWN.exec(text))?.[0] ?? text;
}
