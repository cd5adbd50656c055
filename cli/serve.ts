import { hostname } from "node:os";
import type { Command } from "commander";
import { z } from "zod";
import { deploymentSettings } from "../settings/deployment.js";
import { untilSignal } from "./signals.js";

const FlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  replica: z.string().min(1).optional(),
  recoverEvery: z.coerce.number().min(0, { error: "--recover-every must be >= 0 seconds" }),
  lease: z.coerce.number().min(1, { error: "--lease must be at least 1 second" }),
  pool: z.coerce.number().int().min(3, { error: "--pool must be a whole number, 3 or more" }),
  drain: z.coerce.number().min(0, { error: "--drain must be >= 0 seconds" }),
});

export const EMBED_PACKAGE = "@langchain/langgraph-api";
/** The embeddable server is experimental: the one version served and tested (package.json). */
export const EMBED_VERSION = "1.5.1";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

async function serve(raw: unknown): Promise<void> {
  const parsed = FlagsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "invalid flags");
  const flags = parsed.data;
  const deployment = deploymentSettings();
  const url = deployment.TABLEMINDS_DATABASE_URL;
  if (!url) {
    throw new Error(
      "serve needs PostgreSQL: set TABLEMINDS_DATABASE_URL=postgres://... (on one machine, `npm run studio` serves the graphs without it)",
    );
  }
  const [{ serve: listen }, { createReplica }] = await Promise.all([
    import("@hono/node-server"),
    import("../server/replica.js").catch((error: NodeJS.ErrnoException) => {
      // An optional peer: one-machine installs do without LangGraph's API server and its loader.
      if (error.code === "ERR_MODULE_NOT_FOUND" && error.message.includes(EMBED_PACKAGE)) {
        throw new Error(
          `serve needs ${EMBED_PACKAGE} ${EMBED_VERSION}: npm install ${EMBED_PACKAGE}@${EMBED_VERSION}`,
        );
      }
      throw error;
    }),
  ]);
  const replica = await createReplica({
    databaseUrl: url,
    replica: flags.replica ?? `${hostname()}:${process.pid}`,
    loopback: LOOPBACK.has(flags.host),
    recoverEveryMs: flags.recoverEvery * 1000,
    leaseMs: flags.lease * 1000,
    poolSize: flags.pool,
  });
  const server = await new Promise<ReturnType<typeof listen>>((resolve) => {
    const started = listen(
      { fetch: replica.app.fetch, hostname: flags.host, port: flags.port },
      () => resolve(started),
    );
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : flags.port;
  process.stderr.write(
    `serve: the LangGraph API on http://${flags.host}:${port} (graphs and threads in PostgreSQL)\n`,
  );
  if (!deployment.TABLEMINDS_ARTIFACT_STORE) {
    process.stderr.write(
      "serve: tables stay in this replica's TABLEMINDS_HOME: if it dies, another replica cannot finish its runs (set TABLEMINDS_ARTIFACT_STORE=s3://... shared by all)\n",
    );
  }
  const signal = await untilSignal();
  process.stderr.write(
    `serve: ${signal}, finishing running requests (at most ${flags.drain} s; then the runs left are taken up by another replica)\n`,
  );
  const drained = (async () => {
    await new Promise((resolve) => server.close(resolve));
    await replica.close();
  })();
  const timer = new Promise<"late">((resolve) =>
    setTimeout(() => resolve("late"), flags.drain * 1000).unref(),
  );
  if ((await Promise.race([drained, timer])) === "late") {
    process.stderr.write(
      "serve: stopping with runs still going; their leases expire for another replica\n",
    );
    process.exit(0);
  }
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("serve every graph over the LangGraph API, backed by PostgreSQL (replicable)")
    .option("--port <port>", "port to listen on (0 picks a free one)", "2024")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--replica <name>", "this replica's name in the runs table (default host:pid)")
    .option(
      "--recover-every <seconds>",
      "how often to look for runs a dead replica left, to finish them here (0: never)",
      "5",
    )
    .option(
      "--pool <connections>",
      "PostgreSQL connections this replica opens; it runs that many less a fifth at once and answers 503 with Retry-After beyond",
      "40",
    )
    .option(
      "--drain <seconds>",
      "on SIGTERM, how long running requests may take to finish before the process stops",
      "30",
    )
    .option(
      "--lease <seconds>",
      "how long a replica's claim on a thread lasts unrenewed: a dead replica's runs are taken up after it, and a database outage shorter than it interrupts no run",
      "30",
    )
    .addHelpText(
      "after",
      [
        "",
        "Needs TABLEMINDS_DATABASE_URL (postgres://user@host:port/db); the schema is migrated",
        "at start under an advisory lock, as `tableminds db migrate` does. Start any number of",
        "replicas on one database behind a load balancer: a thread runs on one replica at a",
        "time, any replica answers for any thread, and the runs of a replica that dies are",
        "finished by another from their last checkpoints.",
        "",
        "Beyond loopback, set TABLEMINDS_API_KEYS (user:key,...): each request then needs",
        "Authorization: Bearer <key>. Tables come inline, uploaded (POST /tables?name=f.csv),",
        "or from TABLEMINDS_TABLE_ROOTS. See docs/deploy.md.",
        "",
        "Example:",
        "  TABLEMINDS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres tableminds serve --port 2024",
      ].join("\n"),
    )
    .action(serve);
}
