import type { TableQAStateValue } from "../blackboard/state.js";

/**
 * The fields `--json` prints, in order: the state's, and `figures` (the figures the answer
 * rests on, with the paths of their PNG and SVG files; see cli/report.ts).
 */
export const JSON_FIELDS = [
  "answer",
  "evidence",
  "plan",
  "attempts",
  "figures",
  "verdict",
  "reflections",
  "memories",
  "budget",
] as const satisfies readonly (keyof TableQAStateValue | "figures")[];

/** The help of `ask --json`, naming every field it prints. */
export const JSON_OPTION_HELP = `print {${JSON_FIELDS.join(", ")}} as JSON instead of text`;
