import { appendFileSync, existsSync, readFileSync } from "node:fs";

/**
 * Where the process's warnings go. Node prints them as `(node:PID) Name: message`; the CLI
 * prints ours as `tableminds: warning: message` instead, and an evaluation sends them to its
 * run directory so they do not break the progress bar.
 */
type Sink = (line: string) => void;

const toStderr: Sink = (line) => process.stderr.write(`${line}\n`);
let sink: Sink = toStderr;
let installed = false;

function describe(warning: Error): string {
  return warning.name === "TablemindsWarning"
    ? `tableminds: warning: ${warning.message}`
    : `(node) ${warning.name}: ${warning.message}`;
}

/** Replaces Node's own printer (a plain 'warning' listener) with ours; once per process. */
export function routeWarnings(): void {
  if (installed) return;
  installed = true;
  process.removeAllListeners("warning");
  process.on("warning", (warning) => sink(describe(warning)));
}

/** Sends warnings to `next` until the returned function restores the previous sink. */
export function redirectWarnings(next: Sink): () => void {
  const previous = sink;
  sink = next;
  return () => {
    sink = previous;
  };
}

/**
 * Appends warnings to a run's log, each line tagged with its question's id when it has one.
 * A line the log already holds (its question ran again after an interruption, a failure or a
 * retry) is not written twice. Returns whether the line was new.
 */
export function warningsLog(file: string): (line: string, question?: string) => boolean {
  const key = (line: string, question?: string) => (question ? `[${question}] ${line}` : line);
  const seen = new Set<string>();
  if (existsSync(file)) {
    // Each line is "<time> <key>".
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line.trim()) seen.add(line.slice(line.indexOf(" ") + 1));
    }
  }
  return (line, question) => {
    const text = key(line, question);
    if (seen.has(text)) return false;
    seen.add(text);
    appendFileSync(file, `${new Date().toISOString()} ${text}\n`);
    return true;
  };
}
