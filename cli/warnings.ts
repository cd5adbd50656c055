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
