/**
 * Builds the page of `tableminds ui` (ui/page.tsx, its components and styles) into one script
 * and one stylesheet for the browser, minified, with nothing loaded from elsewhere at run time:
 * `scripts/build.mjs` runs it into dist/ui and .build/ui, and server/page.ts runs it into the
 * cache when the page is served from the sources. Plain JavaScript, like build.mjs.
 *
 *   node scripts/bundle-ui.mjs <out dir>
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, gzipSync } from "node:zlib";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The files the page is made of, by name (each also compressed: `.br`, `.gz`). */
export const PAGE_FILES = ["page.js", "page.css"];

/** Bundles the page into `outDir`; returns each file's size in bytes, as built and as sent. */
export async function bundlePage(outDir) {
  const { build } = await import("esbuild");
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [path.join(ROOT, "ui/page.tsx")],
    outdir: outDir,
    entryNames: "page",
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    legalComments: "none",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
    absWorkingDir: ROOT,
  });
  const sizes = {};
  for (const name of PAGE_FILES) {
    const file = path.join(outDir, name);
    const bytes = readFileSync(file);
    writeFileSync(`${file}.br`, brotliCompressSync(bytes));
    writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
    sizes[name] = { bytes: bytes.length, brotli: statSync(`${file}.br`).size };
  }
  return sizes;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node scripts/bundle-ui.mjs <out dir>");
    process.exit(2);
  }
  const sizes = await bundlePage(path.resolve(out));
  console.error(`bundled the page into ${out}: ${JSON.stringify(sizes)}`);
}
