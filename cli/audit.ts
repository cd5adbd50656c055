import type { Command } from "commander";
import { z } from "zod";

const AuditFlagsSchema = z.object({
  full: z.boolean(),
  json: z.boolean(),
});

/** A request body's prompt text: each chat message under its role, or an embedding's input. */
export function promptText(body: string | null): string {
  if (body === null) return "(no text body)";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  const Chat = z.object({
    messages: z.array(z.looseObject({ role: z.string(), content: z.unknown() })),
  });
  const chat = Chat.safeParse(parsed);
  if (chat.success) {
    return chat.data.messages
      .map((m) => {
        const content =
          typeof m.content === "string" ? m.content : JSON.stringify(m.content, null, 2);
        return `[${m.role}]\n${content}`;
      })
      .join("\n\n");
  }
  const input = z.object({ input: z.unknown() }).safeParse(parsed);
  if (input.success) return `[embedding input]\n${JSON.stringify(input.data.input, null, 2)}`;
  return body;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/**
 * `tableminds audit [run]`: what left this machine for a model endpoint. Without a run, the
 * runs the log holds; with one (or `last`), its requests: when, to which endpoint, which model,
 * how many bytes, and with `--full` the prompts themselves.
 */
export function registerAuditCommand(program: Command): void {
  program
    .command("audit")
    .description(
      "show what left this machine for a model endpoint, from the audit log in $TABLEMINDS_HOME/audit: without a run, the runs it holds; with a run id (or `last`), each request's time, endpoint, model and size (headers, and so keys, are never logged)",
    )
    .argument("[run]", "a run id as listed, or `last`")
    .option("--full", "also print each request's prompt text", false)
    .option("--json", "print JSON: the runs, or the run's requests (bodies with --full)", false)
    .action(async (run: string | undefined, flags: unknown) => {
      const opts = AuditFlagsSchema.parse(flags);
      const { auditDir, listAuditRuns, readAuditRun } = await import("../models/audit.js");
      const runs = listAuditRuns();
      if (run === undefined) {
        if (opts.json) {
          console.log(JSON.stringify(runs, null, 2));
          return;
        }
        if (runs.length === 0) {
          console.log(`no run has sent anything yet (${auditDir()} is empty)`);
          return;
        }
        for (const r of runs) {
          const local = r.localCalls > 0 ? `, ${plural(r.localCalls, "embedded model call")}` : "";
          const where = r.endpoints.length > 0 ? ` to ${r.endpoints.join(", ")}` : "";
          console.log(
            `${r.run}  ${r.first ?? "?"}  ${plural(r.requests, "request")} (${size(r.bytes)})${local}${where}`,
          );
        }
        return;
      }
      const id = run === "last" ? runs.at(-1)?.run : run;
      const entries = id === undefined ? [] : readAuditRun(id);
      if (id === undefined || entries.length === 0) {
        throw new Error(
          `no audit log for run ${JSON.stringify(run)} in ${auditDir()}: \`tableminds audit\` lists the runs`,
        );
      }
      if (opts.json) {
        const shown = opts.full ? entries : entries.map(({ body: _body, ...rest }) => rest);
        console.log(JSON.stringify(shown, null, 2));
        return;
      }
      for (const entry of entries) {
        if (entry.kind === "local") {
          console.log(`${entry.time}  ${entry.endpoint}  ${entry.model ?? "?"}  nothing sent`);
          continue;
        }
        console.log(
          `${entry.time}  ${entry.endpoint}  ${entry.model ?? "?"}  ${size(entry.bytes)}`,
        );
        if (opts.full) console.log(`${promptText(entry.body)}\n`);
      }
      const requests = entries.filter((e) => e.kind === "request");
      const local = entries.length - requests.length;
      const bytes = requests.reduce((sum, e) => sum + e.bytes, 0);
      console.log(
        `${plural(requests.length, "request")} left this machine (${size(bytes)})` +
          (local > 0 ? `; ${plural(local, "call")} to the embedded model sent nothing` : ""),
      );
    });
}
