/**
 * The stamp of a checkout's runtime sources: every file of the runtime folders (below) and the
 * config files beside them, by path, size and modification time. The
 * checkout build (`node scripts/build.mjs --checkout`, run by `npm run setup`) writes it
 * beside the JavaScript it compiles, and cli/bin.js runs that JavaScript only while the stamp
 * still matches: an edited, added or removed file sends it back to the sources. Plain
 * JavaScript, read by bin.js before any TypeScript loader.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Where the checkout build goes (ignored by git). */
export const CHECKOUT_BUILD = ".build";
const STAMP = "sources.stamp";
const SKIP_DIR = new Set(["__pycache__", "node_modules"]);
const SKIP_FILE = /^\.|\.pyc$|\.tsbuildinfo$/;
const CONFIG_FILES = ["tsconfig.json", "tsconfig.build.json", "langgraph.json", "package.json"];

const NOT_RUNTIME = new Set(["tests", "bench", "scripts"]);

/**
 * The folders the checkout build compiles: those of tsconfig.json but the tests, benchmarks
 * and scripts (tsc reaches server/ through imports for dist/; a file-by-file build must list it).
 */
export function runtimeFolders(root) {
  const include = JSON.parse(readFileSync(path.join(root, "tsconfig.json"), "utf8")).include;
  // ui/ (the page, TSX bundled for the browser) is checked by its own tsconfig.
  return [...include, "ui"].filter(
    (entry) =>
      !NOT_RUNTIME.has(entry) &&
      statSync(path.join(root, entry), { throwIfNoEntry: false })?.isDirectory(),
  );
}

/** Every file under `folder` (relative to `root`), but caches and hidden files. */
export function* files(root, folder) {
  for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIR.has(entry.name)) yield* files(root, relative);
    } else if (entry.isFile() && !SKIP_FILE.test(entry.name)) {
      yield relative;
    }
  }
}

/** The stamp of the sources under `root` now. */
export function sourceStamp(root) {
  const hash = createHash("sha256");
  const listed = [...CONFIG_FILES, ...runtimeFolders(root).flatMap((f) => [...files(root, f)])];
  for (const relative of listed.sort()) {
    const info = statSync(path.join(root, relative), { throwIfNoEntry: false });
    hash.update(`${relative}\0${info?.size ?? -1}\0${info?.mtimeMs ?? -1}\n`);
  }
  return hash.digest("hex");
}

export function stampFile(root) {
  return path.join(root, CHECKOUT_BUILD, STAMP);
}

/** The checkout build's entry module, when it was built from the sources as they are now. */
export function freshBuild(root, entry = "cli/main.js") {
  const file = stampFile(root);
  if (!existsSync(file)) return undefined;
  const built = readFileSync(file, "utf8").trim();
  const main = path.join(root, CHECKOUT_BUILD, entry);
  return built === sourceStamp(root) && existsSync(main) ? main : undefined;
}
