import type { Command } from "commander";
import { z } from "zod";
import { PRESETS } from "../training/rewards/types.js";

const FlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).optional(),
  host: z.string().min(1),
  tokenFile: z.string().min(1).optional(),
  preset: z.enum(PRESETS, { error: `--preset must be one of: ${PRESETS.join(", ")}` }),
  concurrency: z.coerce.number().int().min(1, { error: "--concurrency must be >= 1" }),
  bodyLimit: z.coerce.number().int().min(1024, { error: "--body-limit must be >= 1024 bytes" }),
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

/** Resolves on the first SIGINT/SIGTERM; a second one exits at once. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.once("SIGINT", () => process.exit(130));
      process.once("SIGTERM", () => process.exit(143));
      resolve(signal);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

async function serveReward(flags: Flags): Promise<void> {
  const server = await import("../training/server/index.js");
  if (flags.writeVerl) {
    await server.writeVerlModule(flags.writeVerl, flags.verlUrl);
    process.stderr.write(`serve-reward: wrote the verl reward module to ${flags.writeVerl}\n`);
    return;
  }
  if (flags.port === undefined) throw new Error("--port is required (0 picks a free one)");
  if (!flags.tokenFile) throw new Error("--token-file is required");
  const token = await server.readTokenFile(flags.tokenFile);
  const { getSandbox, closeSandboxes } = await import("../tools/sandbox/index.js");
  const sandbox = await getSandbox(flags.sandbox);
  const running = await server.startRewardServer({
    host: flags.host,
    port: flags.port,
    token,
    preset: flags.preset,
    concurrency: flags.concurrency,
    bodyLimitBytes: flags.bodyLimit,
    sandbox,
    prefixMismatch: flags.prefixMismatch,
  });
  process.stderr.write(
    `serve-reward: ${flags.preset} rewards on ${running.url} (POST /reward, /reward/{plan,code,answer}; GET /health)\n`,
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
    .option("--concurrency <n>", "reward computations running at once", "4")
    .option("--body-limit <bytes>", "largest request body accepted", String(1024 * 1024))
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
      "\nThe verl module reads TABLEMINDS_REWARD_URL, TABLEMINDS_REWARD_TOKEN (or _TOKEN_FILE), " +
        "TABLEMINDS_REWARD_TIMEOUT and TABLEMINDS_REWARD_ROLE. See docs/training.md.",
    )
    .action(async (raw: unknown) => {
      await serveReward(parseFlags(raw));
    });
}
