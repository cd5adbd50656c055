import type { TableQAStateValue } from "../blackboard/state.js";

/** The fields `--json` prints, in order. */
export const JSON_FIELDS = [
  "answer",
  "evidence",
  "plan",
  "attempts",
  "verdict",
  "reflections",
  "memories",
  "budget",
] as const satisfies readonly (keyof TableQAStateValue)[];

/** The help of `ask --json`, naming every field it prints. */
export const JSON_OPTION_HELP = `print {${JSON_FIELDS.join(", ")}} as JSON instead of text`;
