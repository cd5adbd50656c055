import path from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { PRESETS } from "../training/rewards/types.js";
import { verlRewardOverrides } from "../training/server/verl.js";
import { untilSignal } from "./signals.js";

const FlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).optional(),
  host: z.string().min(1),
  tokenFile: z.string().min(1).optional(),
  preset: z.enum(PRESETS, { error: `--preset must be one of: ${PRESETS.join(", ")}` }),
  planConcurrency: z.coerce.number().int().min(1, { error: "--plan-concurrency must be >= 1" }),
  codeConcurrency: z.coerce.number().int().min(1, { error: "--code-concurrency must be >= 1" }),
  answerConcurrency: z.coerce.number().int().min(1, { error: "--answer-concurrency must be >= 1" }),
  bodyLimit: z.coerce.number().int().min(1024, { error: "--body-limit must be >= 1024 bytes" }),
  inlineLimit: z.coerce.number().int().min(1, { error: "--inline-limit must be >= 1 byte" }),
  sandbox: z.enum(["local", "e2b"]),
  prefixMismatch: z.enum(["reject", "whole"]),
  writeVerl: z.string().min(1).optional(),
  verlUrl: z.string().url().optional(),
});
type Flags = z.infer<typeof FlagsSchema>;

function parseFlags(raw: unknown): Flags {
  const parsed = FlagsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "invalid flags");
  return parsed.data;
}

async function serveReward(flags: Flags): Promise<void> {
  const server = await import("../training/server/index.js");
  if (flags.writeVerl) {
    await server.writeVerlModule(flags.writeVerl, flags.verlUrl);
    process.stderr.write(
      `serve-reward: wrote the verl reward module to ${flags.writeVerl}; verl 0.9.1 takes it with\n` +
        `  ${verlRewardOverrides(path.resolve(flags.writeVerl)).join(" ")}\n`,
    );
    return;
  }
  if (flags.port === undefined) throw new Error("--port is required (0 picks a free one)");
  if (!flags.tokenFile) throw new Error("--token-file is required");
  const token = await server.readTokenFile(flags.tokenFile);
  const { getSandbox, closeSandboxes } = await import("../sandbox/index.js");
  const { artifactDir } = await import("../storage/artifacts.js");
  const sandbox = await getSandbox(flags.sandbox);
  const running = await server.startRewardServer({
    host: flags.host,
    port: flags.port,
    token,
    preset: flags.preset,
    concurrency: {
      plan: flags.planConcurrency,
      code: flags.codeConcurrency,
      answer: flags.answerConcurrency,
    },
    bodyLimitBytes: flags.bodyLimit,
    inlineTableBytes: flags.inlineLimit,
    sandbox,
    prefixMismatch: flags.prefixMismatch,
    onRefused: (message) => process.stderr.write(`serve-reward: refused ${message}\n`),
  });
  process.stderr.write(
    `serve-reward: ${flags.preset} rewards on ${running.url} (POST /reward, /reward/{plan,code,answer}; GET /health)\n` +
      `serve-reward: code rewards read tables only from ${artifactDir()}, by verified sha256, or inline\n`,
  );
  const signal = await untilSignal();
  process.stderr.write(`serve-reward: ${signal}, finishing running requests\n`);
  await running.close();
  await closeSandboxes();
}

export function registerServeRewardCommand(program: Command): void {
  program
    .command("serve-reward")
    .description("serve the Mixture-of-Minds rewards over HTTP (OpenRLHF's remote reward contract)")
    .option("--port <port>", "port to listen on (0 picks a free one)")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--token-file <file>", "file holding the bearer token clients must send")
    .option("--preset <preset>", "reward preset: paper or release", "release")
    .option("--code-concurrency <n>", "code rewards (sandbox runs) computed at once", "4")
    .option("--plan-concurrency <n>", "plan rewards computed at once (never behind code)", "16")
    .option("--answer-concurrency <n>", "answer rewards computed at once (never behind code)", "16")
    .option(
      "--body-limit <bytes>",
      "largest request body accepted (413 above)",
      String(1024 * 1024),
    )
    .option("--inline-limit <bytes>", "largest inline table of a label", String(256 * 1024))
    .option("--sandbox <backend>", "where code rewards run code: local or e2b", "local")
    .option(
      "--prefix-mismatch <mode>",
      "a query not starting with its prompt: reject (400) or whole (score the whole query)",
      "reject",
    )
    .option("--write-verl <file>", "write the verl reward module (Python) to <file> and exit")
    .option("--verl-url <url>", "with --write-verl: the server URL the module defaults to")
    .addHelpText(
      "after",
      [
        "",
        "Every route but GET /health takes the token; a request without it, or with a",
        "Content-Length over --body-limit, is refused before its body is read.",
        "",
        "Labels' tables (read by code rewards only) are either tables of this server's",
        "artifact store ($TABLEMINDS_HOME/artifacts) named by sha256 and checked against",
        'the file\'s content, {"name": "t", "sha256": "..."}, or inline data the server',
        'stores itself, {"name": "t", "csv": "a,b\\n1,2\\n"} or',
        '{"name": "t", "records": [{"a": 1, "b": 2}]}. A uri is never opened: one not',
        "ending in <sha256>.csv or <sha256>.parquet is refused.",
        "A refused sample scores 0 and the reply's errors[i] says why.",
        "",
        "OpenRLHF: --reward.remote_url 'http://HOST:PORT/reward?token=TOKEN' (before 0.10.2,",
        "--remote_rm_url).",
        "verl (0.9.1): --write-verl FILE writes the module; its trainer takes it with",
        ...verlRewardOverrides("FILE").map((override) => `  ${override}`),
        "The verl module reads TABLEMINDS_REWARD_URL, TABLEMINDS_REWARD_TOKEN (or _TOKEN_FILE),",
        "TABLEMINDS_REWARD_TIMEOUT and TABLEMINDS_REWARD_ROLE. See docs/training.md.",
      ].join("\n"),
    )
    .action(async (raw: unknown) => {
      await serveReward(parseFlags(raw));
    });
}
