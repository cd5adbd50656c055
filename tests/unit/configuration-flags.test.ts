import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import {
  ASK_FLAGS,
  configurationFromFlags,
  withConfigurationFlags,
} from "../../cli/configuration-flags.js";
import { ConfigurationSchema } from "../../settings/configuration.js";
import { operatorSettings, resetOperatorSettings } from "../../settings/operator.js";

/** A command with the `ask` flags that keeps its errors instead of exiting. */
function askCommand() {
  const errors: string[] = [];
  const command = withConfigurationFlags(new Command("ask"), ASK_FLAGS)
    .exitOverride()
    .configureOutput({ writeErr: (text) => errors.push(text), writeOut: () => {} })
    .action(() => {});
  return { command, errors };
}

function given(...args: string[]) {
  const { command } = askCommand();
  command.parse(args, { from: "user" });
  return configurationFromFlags(command);
}

describe("the configuration flags", () => {
  it("set only what is given, in the configuration's own keys", () => {
    expect(given()).toEqual({});
    expect(
      given(
        "-m",
        "m1",
        "--exec-timeout",
        "2000",
        "--llm-timeout",
        "9000",
        "--llm-retries",
        "0",
        "--no-check",
        "--llm-checker",
        "--max-reflections",
        "0",
        "--temperature",
        "0.5",
        "--sandbox",
        "e2b",
        "--stream",
        "--no-memory",
        "--memory-namespace",
        "ada",
        "--replay-cache",
        "replies.jsonl",
      ),
    ).toEqual({
      model: "m1",
      execTimeoutMs: 2000,
      llmTimeoutMs: 9000,
      llmMaxRetries: 0,
      check: false,
      llmChecker: true,
      maxReflections: 0,
      temperature: 0.5,
      streaming: true,
      memory: false,
      memoryNamespace: "ada",
    });
    // Where code runs and which replies are replayed are the operator's, not the run context's.
    expect(operatorSettings()).toMatchObject({
      sandbox: "e2b",
      replayCache: path.resolve("replies.jsonl"),
    });
    resetOperatorSettings();
  });

  it("refuses a value the schema refuses, naming the flag", () => {
    for (const [args, problem] of [
      [["--max-code-attempts", "0"], "Too small"],
      [["--max-code-attempts", "11"], "Too big"],
      [["--exec-timeout", "1.5"], "expected int"],
      [["--llm-retries", "many"], "expected a number"],
      [["--sandbox", "docker"], "expected one of"],
    ] as const) {
      const { command, errors } = askCommand();
      expect(() => command.parse([...args], { from: "user" })).toThrow();
      expect(errors.join("")).toMatch(
        new RegExp(
          `^error: option '${args[0]} <\\w+>' argument '${args[1]}' is invalid\\. .*${problem}`,
        ),
      );
    }
  });

  it("take their help and shown defaults from the schema", () => {
    const help = askCommand().command.helpInformation({ error: false }).replace(/\s+/g, " ");
    for (const key of ASK_FLAGS) {
      const field = ConfigurationSchema.shape[key];
      const words = field.description?.split(" ").slice(1, 4).join(" ") ?? "";
      expect(help, key).toContain(words);
      const fallback = ConfigurationSchema.parse({})[key];
      if (typeof fallback === "number") expect(help).toContain(`(default: ${fallback})`);
    }
    expect(help).toContain('(choices: "local", "e2b")');
    expect(help).toContain("--exec-timeout <ms>");
    expect(help).toContain("--no-check do not check the answer");
  });
});
