import type { Command } from "commander";
import { z } from "zod";
import { EMBED_PACKAGE, EMBED_VERSION } from "./serve.js";
import { untilSignal } from "./signals.js";

const FlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535, { error: "--port must be 0-65535" }),
});

/** `tableminds ui`: the page and one machine's LangGraph API, on loopback, until stopped. */
async function ui(raw: unknown): Promise<void> {
  const parsed = FlagsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "invalid flags");
  const [{ serve: listen }, { createLocalServer }] = await Promise.all([
    import("@hono/node-server"),
    import("../server/local.js").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ERR_MODULE_NOT_FOUND" && error.message.includes(EMBED_PACKAGE)) {
        throw new Error(
          `ui needs ${EMBED_PACKAGE} ${EMBED_VERSION}: npm install ${EMBED_PACKAGE}@${EMBED_VERSION}`,
        );
      }
      throw error;
    }),
  ]);
  process.stderr.write("ui: loading the graphs...\n");
  const local = await createLocalServer();
  const server = await new Promise<ReturnType<typeof listen>>((resolve, reject) => {
    const started = listen(
      { fetch: local.app.fetch, hostname: "127.0.0.1", port: parsed.data.port },
      () => resolve(started),
    );
    started.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`port ${parsed.data.port} is in use: pick another with --port`)
          : error,
      ),
    );
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : parsed.data.port;
  process.stdout.write(`http://127.0.0.1:${port}/ui/\n`);
  process.stderr.write(
    "ui: open the address above in a browser; threads are kept in TABLEMINDS_HOME (Ctrl-C stops)\n",
  );
  await untilSignal();
  await new Promise((resolve) => server.close(resolve));
  await local.close();
}

export function registerUiCommand(program: Command): void {
  program
    .command("ui")
    .description(
      "open the page: ask over your tables in a browser and see the cells each answer comes from",
    )
    .option("--port <port>", "port to listen on, on 127.0.0.1 (0 picks a free one)", "2025")
    .addHelpText(
      "after",
      [
        "",
        "Serves the page and every graph's LangGraph API on this machine only (127.0.0.1), with",
        "threads and checkpoints in TABLEMINDS_HOME. It prints the page's address on stdout.",
        "The same page is on `tableminds serve` at /ui/. See docs/ui.md.",
        "",
        "Example:",
        "  tableminds ui --port 2025",
      ].join("\n"),
    )
    .action(ui);
}
