import path from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { z } from "zod";
import type { Configuration } from "../blackboard/configuration.js";

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected an integer >= 0");
  return n;
}

export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number >= 0");
  return n;
}

/** The run configuration's flags, the same for `ask` and `eval run`. */
export function withConfigurationFlags(command: Command): Command {
  return command
    .option("-m, --model <name>", "model for every role (overrides TABLEMINDS_MODEL)")
    .option("--temperature <t>", "sampling temperature (default 0)", nonNegativeNumber)
    .option(
      "--max-code-attempts <n>",
      "code attempts before answering anyway (default 3)",
      positiveInt,
    )
    .addOption(
      new Option("--sandbox <backend>", "where generated code runs (default local)").choices([
        "local",
        "e2b",
      ]),
    )
    .option("--exec-timeout <ms>", "wall-clock limit per code run (default 15000)", positiveInt)
    .option("--llm-timeout <ms>", "timeout per model call (default 120000)", positiveInt)
    .option("--llm-retries <n>", "retries of a failed model call (default 3)", nonNegativeInt)
    .option("--no-check", "skip checking answers (format, type, grounding)")
    .option("--llm-checker", "also let a model score each answer's type, format and grounding")
    .option(
      "--max-reflections <n>",
      "retries after a failed check, each with a diagnosis (default 2; 0: none)",
      nonNegativeInt,
    )
    .option(
      "--replay-cache <file>",
      "answer repeated model calls from this file, and record new ones",
    );
}

const ConfigurationFlagsSchema = z.object({
  model: z.string().optional(),
  temperature: z.number().optional(),
  maxCodeAttempts: z.number().optional(),
  sandbox: z.enum(["local", "e2b"]).optional(),
  execTimeout: z.number().optional(),
  llmTimeout: z.number().optional(),
  llmRetries: z.number().optional(),
  check: z.boolean().optional(),
  llmChecker: z.boolean().optional(),
  maxReflections: z.number().optional(),
  replayCache: z.string().optional(),
});

/** The configuration those flags set; what was not given is left to the defaults. */
export function configurationFromFlags(opts: unknown): Partial<Configuration> {
  const flags = ConfigurationFlagsSchema.parse(opts);
  const context: Partial<Configuration> = {
    model: flags.model,
    temperature: flags.temperature,
    maxCodeAttempts: flags.maxCodeAttempts,
    sandbox: flags.sandbox,
    execTimeoutMs: flags.execTimeout,
    llmTimeoutMs: flags.llmTimeout,
    llmMaxRetries: flags.llmRetries,
    // --no-check gives false; the default (true) is left to the configuration.
    check: flags.check === false ? false : undefined,
    llmChecker: flags.llmChecker,
    maxReflections: flags.maxReflections,
    replayCache: flags.replayCache ? path.resolve(flags.replayCache) : undefined,
  };
  return Object.fromEntries(
    Object.entries(context).filter(([, v]) => v !== undefined),
  ) as Partial<Configuration>;
}
