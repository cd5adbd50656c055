import path from "node:path";
import { Writable } from "node:stream";
import type { Command } from "commander";
import { z } from "zod";
import { configurationFromFlags, withConfigurationFlags } from "./configuration-flags.js";
import type { GraphShelf } from "./mcp-ask.js";
import { untilSignal } from "./signals.js";

const FlagsSchema = z.object({
  http: z.boolean(),
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  tableRoot: z.array(z.string().min(1)),
  memory: z.boolean(),
});
type Flags = z.infer<typeof FlagsSchema>;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

const HELP = `
Tools: ask (a question about tables -> the answer, the check's verdict and the evidence, as
ask --json prints them; a progress notification per step; a cancelled call stops the run),
inspect_table (columns, types, row count, first rows), list_graphs.

Over stdio (the default) it is the local user's server, as the CLI is: table paths under the
working folder and TABLEMINDS_TABLE_ROOTS (or only the --table-root folders). Over HTTP
(--http, at /mcp) it is served: tables inline, as CSV text or under TABLEMINDS_TABLE_ROOTS, and
each request needs Authorization: Bearer <key> of TABLEMINDS_API_KEYS (user:key,...), as the
API server does; without keys it answers only loopback requests. See docs/mcp.md.

Examples:
  tableminds mcp
  TABLEMINDS_API_KEYS=me:$(openssl rand -hex 16) tableminds mcp --http --port 8765

An MCP client's mcpServers entry (stdio):
  "tableminds": { "command": "npx", "args": ["tableminds", "mcp", "--table-root", "/data"],
                  "env": { "OPENAI_API_KEY": "sk-..." } }`;

/** Stops both transports' shared parts: the sandbox pool and the memory store. */
type Closer = () => Promise<void>;

/**
 * stdout carries the protocol over stdio: a stray line there (a library's log) would break it.
 * The transport gets the real stdout; everything else written to it goes to stderr.
 */
function protocolChannel(): Writable {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      write(chunk, (error) => done(error ?? null));
    },
  });
}

/** Settles when the client closes our stdin: the stdio session is over. */
function untilStdinEnds(): Promise<string> {
  return new Promise((resolve) => {
    process.stdin.once("end", () => resolve("end of input"));
    process.stdin.once("close", () => resolve("end of input"));
  });
}

async function serveStdio(shelf: GraphShelf, close: Closer): Promise<void> {
  const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("./mcp-server.js"),
  ]);
  const server = createMcpServer({ graphs: shelf });
  await server.connect(new StdioServerTransport(process.stdin, protocolChannel()));
  process.stderr.write("mcp: tableminds over stdio\n");
  const why = await Promise.race([untilStdinEnds(), untilSignal()]);
  process.stderr.write(`mcp: ${why}, stopping\n`);
  await server.close();
  await close();
}

async function serveHttp(flags: Flags, shelf: GraphShelf, close: Closer): Promise<void> {
  const [{ serve }, { allowedOrigins, keysOf }, { createMcpHttpApp }] = await Promise.all([
    import("@hono/node-server"),
    import("../server/access.js"),
    import("./mcp-http.js"),
  ]);
  const keys = keysOf(process.env);
  const loopback = LOOPBACK.has(flags.host);
  const http = createMcpHttpApp({
    access: { keys, origins: allowedOrigins(), loopback },
    graphs: shelf,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: http.app.fetch, hostname: flags.host, port: flags.port }, () =>
      resolve(started),
    );
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : flags.port;
  const host = flags.host.includes(":") ? `[${flags.host}]` : flags.host;
  const who = keys.size
    ? `${keys.size} API key${keys.size === 1 ? "" : "s"}`
    : loopback
      ? "no API keys: loopback requests only"
      : "no API keys beyond loopback: every request is refused; set TABLEMINDS_API_KEYS";
  process.stderr.write(
    `mcp: tableminds over streamable HTTP at http://${host}:${port}/mcp (${who})\n`,
  );
  const signal = await untilSignal();
  process.stderr.write(`mcp: ${signal}, stopping\n`);
  await http.close();
  await new Promise((resolve) => {
    server.close(resolve);
    // Clients' open event streams would hold the server open.
    if ("closeAllConnections" in server) server.closeAllConnections();
  });
  await close();
}

async function mcp(raw: unknown, command: Command): Promise<void> {
  const flags = FlagsSchema.parse(raw);
  configurationFromFlags(command);
  const [{ setOperatorSettings }, { openPersistence }, { closeSandboxes }, { GraphShelf }] =
    await Promise.all([
      import("../settings/operator.js"),
      import("../graphs/persistence.js"),
      import("../sandbox/index.js"),
      import("./mcp-ask.js"),
    ]);
  if (flags.tableRoot.length > 0) {
    setOperatorSettings({ tableRoots: flags.tableRoot.map((dir) => path.resolve(dir)) });
  }
  const persistence = await openPersistence({ checkpoints: false, memory: flags.memory });
  const shelf = new GraphShelf(persistence.store);
  const close = async () => {
    await closeSandboxes();
    await persistence.close();
  };
  if (flags.http) await serveHttp(flags, shelf, close);
  else await serveStdio(shelf, close);
}

export function registerMcpCommand(program: Command): void {
  const command = program
    .command("mcp")
    .description(
      "serve ask, inspect_table and list_graphs to MCP clients (desktop assistants, IDE agents), over stdio or HTTP",
    )
    .option("--http", "serve streamable HTTP at /mcp instead of stdio", false)
    .option("--port <port>", "HTTP port (0 picks a free one)", "8765")
    .option("--host <host>", "HTTP address to listen on", "127.0.0.1")
    .option(
      "--table-root <dir>",
      "the only folder table paths may be under (repeatable; default: the working folder and TABLEMINDS_TABLE_ROOTS over stdio, TABLEMINDS_TABLE_ROOTS over HTTP)",
      (dir: string, all: string[]) => [...all, dir],
      [],
    )
    .option("--no-memory", "no long-term memory store (recall and archive off)");
  withConfigurationFlags(command, ["sandbox", "replayCache", "workersDir"]);
  command.addHelpText("after", HELP).action(mcp);
}
