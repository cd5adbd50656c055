import type { Command } from "commander";
import { OPERATOR_FIELDS, OPERATOR_SOURCE } from "../settings/configuration.js";

/** `--queue [redis-url]` of `eval run` and `mine`: the queue's URL. */
export const QUEUE_FLAG_HELP =
  "queue the questions for `tableminds consume` processes instead of running them here (default Redis: $TABLEMINDS_QUEUE_URL)";

/**
 * The queue a command's `--queue [url]` names, reachable now. The operator's settings (sandbox,
 * replay cache, workers folder) are each consumer's own: given as flags with --queue, they are
 * refused rather than ignored.
 */
export async function queueOfFlag(flag: string | true, command: Command): Promise<string> {
  for (const field of OPERATOR_FIELDS) {
    if (command.getOptionValueSource(field) === "cli") {
      const flagName = OPERATOR_SOURCE[field].split(" or ")[1] ?? field;
      const variable = OPERATOR_SOURCE[field].split(" or ")[0];
      throw new Error(
        `with --queue, ${flagName} is each consumer's own setting: set ${variable} where the consumers run`,
      );
    }
  }
  const [{ checkQueue, queueUrl }, { queueKey }] = await Promise.all([
    import("../storage/queue/connection.js"),
    import("../storage/queue/seal.js"),
  ]);
  const url = queueUrl(flag);
  queueKey();
  await checkQueue(url);
  return url;
}
