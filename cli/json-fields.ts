import type { TableQAStateValue } from "../blackboard/state.js";

/**
 * The fields `--json` prints, in order: the state's, `figures` (the figures the answer rests
 * on, with the paths of their PNG and SVG files) and `citations` (the source cells of each
 * piece of evidence the answer cites, in the file's own places; see cli/report.ts).
 */
export const JSON_FIELDS = [
  "answer",
  "evidence",
  "plan",
  "attempts",
  "figures",
  "citations",
  "verdict",
  "reflections",
  "memories",
  "budget",
] as const satisfies readonly (keyof TableQAStateValue | "figures" | "citations")[];

/** The help of `ask --json`, naming every field it prints. */
export const JSON_OPTION_HELP = `print {${JSON_FIELDS.join(", ")}} as JSON instead of text`;
