import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/*
 * `npm run setup` installs what answering needs, and `npm test` adds what only the tests need:
 * the scripts each command runs, read as the shell would run them.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const script = (name: string) => readFileSync(path.join(ROOT, "scripts", name), "utf8");
/** The lines a script runs, without its comments. */
const commands = (text: string) =>
  text
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean)
    .join("\n");
const packageScripts = (
  JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;

describe("the setup scripts", () => {
  it("npm run setup installs the sandbox's Python and the model, and nothing only tests need", () => {
    expect(packageScripts.setup).toBe("bash scripts/setup.sh");
    const setup = commands(script("setup.sh"));
    expect(setup).toContain("setup-model.sh");
    expect(setup).toContain("python3-pandas");
    expect(setup).toContain('build.mjs" --checkout');
    for (const testsOnly of ["setup-services.sh", "rouge-score", "nltk", "verl", "venv"]) {
      expect([testsOnly, setup.includes(testsOnly)]).toEqual([testsOnly, false]);
    }
  });

  it("npm test runs setup, then installs the reference scorers and the services", () => {
    expect(packageScripts.test?.startsWith("bash scripts/setup-tests.sh && ")).toBe(true);
    const tests = commands(script("setup-tests.sh"));
    expect(tests).toContain("bash scripts/setup.sh");
    expect(tests).toContain("setup-services.sh");
    expect(tests).toMatch(/rouge-score==[\d.]+/);
    expect(tests).toMatch(/nltk==[\d.]+/);
    expect(tests).toMatch(/verl==[\d.]+/);
  });
});
