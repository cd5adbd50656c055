import { createRequire } from "node:module";
import type { SingleBar } from "cli-progress";
import type { ResultRecord } from "../evals/results-file.js";

/**
 * Progress of an evaluation on stderr: a bar with rate and ETA on a terminal, one plain line
 * per question otherwise (logs, CI, tests read those).
 */
export function evalProgress(
  quiet: boolean,
  stream: NodeJS.WriteStream = process.stderr,
  label = "eval",
) {
  let bar: SingleBar | undefined;
  let count = 0;
  let total = 0;
  let ranNow = 0;
  let scoreSum = 0;
  let errors = 0;
  let started = performance.now();
  return {
    start(todo: number, done: number, all: number) {
      total = all;
      count = done;
      started = performance.now();
      if (quiet) return;
      if (stream.isTTY) {
        // Loaded when a bar is drawn, not with every command's start.
        const { SingleBar: Bar } = createRequire(import.meta.url)(
          "cli-progress",
        ) as typeof import("cli-progress");
        bar = new Bar({
          format: `${label} [{bar}] {value}/{total} | {rate}/min | ETA {eta_formatted} | score {score}% | errors {errors}`,
          stream,
          etaBuffer: 50,
        });
        bar.start(all, done, { rate: "0.0", score: "-", errors: 0 });
      } else {
        stream.write(`${label}: ${todo} to run, ${done} already done, ${all} in all\n`);
      }
    },
    tick(record: ResultRecord) {
      count += 1;
      ranNow += 1;
      scoreSum += record.score.score;
      if (record.error) errors += 1;
      if (quiet) return;
      const rate = ((ranNow * 60_000) / Math.max(1, performance.now() - started)).toFixed(1);
      if (bar) {
        bar.update(count, { rate, score: ((100 * scoreSum) / ranNow).toFixed(1), errors });
      } else {
        const err = record.error ? ` error: ${record.error}` : "";
        stream.write(
          `[${count}/${total}] ${record.id} ${record.score.metric}=${record.score.score.toFixed(2)} ${record.latencyMs} ms${err}\n`,
        );
      }
    },
    /** A line of its own (above the bar on a terminal), printed even when quiet. */
    note(line: string) {
      stream.write(bar ? `\r\x1b[K${line}\n` : `${line}\n`);
      bar?.render();
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
