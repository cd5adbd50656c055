import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "../../cli/main.js";

function optionsOf(name: string): string[] {
  const command = buildProgram().commands.find((c) => c.name() === name);
  if (!command) throw new Error(`no command ${name}`);
  return command.options.map((option) => option.flags);
}

describe("tableminds consume (the queue's consumer)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it("is listed in the help under its name; the former `worker` is not", () => {
    const help = buildProgram().helpInformation();
    expect(help).toMatch(/^ {2}consume \[options\]/m);
    expect(help).not.toMatch(/^ {2}worker\b/m);
  });

  it("still answers to `worker`, with the same flags, and says what it is called now", async () => {
    expect(optionsOf("worker")).toEqual(optionsOf("consume"));
    expect(optionsOf("consume")).toEqual([
      "--queue <redis-url>",
      "-c, --concurrency <n>",
      "--lock-duration <ms>",
    ]);
    vi.stubEnv("TABLEMINDS_QUEUE_URL", "");
    const said: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    const program = buildProgram();
    // With no queue named, the loop refuses in one line before touching Redis.
    await expect(program.parseAsync(["worker"], { from: "user" })).rejects.toThrow(/^no queue:/);
    expect(said.join("")).toContain("`worker` is now `tableminds consume`");
    said.length = 0;
    await expect(buildProgram().parseAsync(["consume"], { from: "user" })).rejects.toThrow(
      /^no queue:/,
    );
    expect(said.join("")).not.toContain("is now");
  });
});
