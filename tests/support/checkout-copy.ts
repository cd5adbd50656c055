import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runtimeFolders } from "../../scripts/source-stamp.mjs";
import { ROOT } from "./cli.js";

/**
 * A copy of this checkout built as `npm run setup` builds it (`.build/`), sharing its
 * node_modules, so that a test can run a clone's command without touching the build of the
 * repository itself, which other tests run. The build's main module prints `mark` to stderr,
 * so a run shows whether it ran the build or fell back to the sources.
 */
export function builtCheckoutCopy(mark: string): string {
  const copy = mkdtempSync(path.join(os.tmpdir(), "tableminds-checkout-"));
  for (const entry of [
    ...runtimeFolders(ROOT),
    "scripts",
    "package.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "langgraph.json",
  ]) {
    cpSync(path.join(ROOT, entry), path.join(copy, entry), {
      recursive: true,
      filter: (source) => !source.includes("__pycache__"),
    });
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"), "dir");
  execFileSync(process.execPath, [path.join(copy, "scripts/build.mjs"), "--checkout"], {
    stdio: "ignore",
  });
  appendFileSync(path.join(copy, ".build/cli/main.js"), `\nprocess.stderr.write("${mark}\\n");\n`);
  return copy;
}
