import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Env, Hono } from "hono";
import { z } from "zod";

/*
 * The page of `tableminds ui` (ui/page.tsx), served by the API it talks to, at /ui/: its script
 * and stylesheet as scripts/bundle-ui.mjs built them, sent compressed when the browser takes it,
 * under a Content-Security-Policy that lets the page load nothing but itself and call nothing
 * but this server. The files are public (they hold no data); the API behind them keeps its keys.
 */

export const PAGE_PATH = "/ui/";

/** Nothing from elsewhere; no inline script or style; not framed; images from here or the page. */
export const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": PAGE_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tableminds</title>
<link rel="icon" href="icon.svg">
<link rel="stylesheet" href="page.css">
<script type="module" src="page.js"></script>
</head>
<body><div id="root"><p class="tm-loading">tableminds: loading the page…</p></div><noscript>The page needs JavaScript.</noscript></body>
</html>
`;

const TYPES: Record<string, string> = {
  "page.js": "text/javascript; charset=utf-8",
  "page.css": "text/css; charset=utf-8",
};

interface Asset {
  plain: Buffer;
  br: Buffer | null;
  gz: Buffer | null;
  type: string;
}

const BundleModuleSchema = z.object({
  bundlePage: z.custom<(outDir: string) => Promise<unknown>>((v) => typeof v === "function"),
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The newest modification time of the page's sources (ui/, views/), or 0 without them. */
async function sourcesChanged(): Promise<number> {
  let newest = 0;
  for (const folder of ["ui", "views"]) {
    const dir = path.join(ROOT, folder);
    if (!existsSync(dir)) continue;
    for (const name of await readdir(dir))
      newest = Math.max(newest, statSync(path.join(dir, name)).mtimeMs);
  }
  return newest;
}

/**
 * Where the built page is: beside the compiled server (dist/ui, .build/ui), else, from the
 * sources, in the cache, bundled there when missing or older than its sources.
 */
async function pageDir(): Promise<string> {
  const beside = path.join(ROOT, "ui");
  if (existsSync(path.join(beside, "page.js"))) return beside;
  const cached = path.join(ROOT, "node_modules", ".cache", "tableminds", "ui");
  const built = path.join(cached, "page.js");
  if (!existsSync(built) || statSync(built).mtimeMs < (await sourcesChanged())) {
    const bundler = BundleModuleSchema.parse(
      await import(pathToFileURL(path.join(ROOT, "scripts", "bundle-ui.mjs")).href),
    );
    // Built aside and moved in file by file: another process serving the page meanwhile reads
    // a whole file, old or new.
    const aside = `${cached}.${process.pid}`;
    await bundler.bundlePage(aside);
    await mkdir(cached, { recursive: true });
    for (const name of await readdir(aside))
      await rename(path.join(aside, name), path.join(cached, name));
    await rm(aside, { recursive: true, force: true });
  }
  return cached;
}

async function loadAssets(): Promise<Map<string, Asset>> {
  const dir = await pageDir();
  const assets = new Map<string, Asset>();
  const optional = (file: string) => (existsSync(file) ? readFileSync(file) : null);
  for (const [name, type] of Object.entries(TYPES)) {
    const file = path.join(dir, name);
    assets.set(name, {
      plain: await readFile(file),
      br: optional(`${file}.br`),
      gz: optional(`${file}.gz`),
      type,
    });
  }
  return assets;
}

/** A grid of four cells, one lit: the page's icon. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" fill="#eef1f5"/><rect x="9" y="9" width="6" height="6" fill="#ffe27a"/><path d="M0 8h16M8 0v16" stroke="#8a939e"/></svg>`;

/**
 * The page's routes on `app`, ahead of its guard: /ui/, its script, stylesheet and icon. The
 * files are read (and, from the sources, bundled) on the first request for one, not when a
 * server starts: a replica that never serves the page never pays for it.
 */
export function pageRoutes<E extends Env>(app: Hono<E>): void {
  let assets: Promise<Map<string, Asset>> | undefined;
  app.get("/ui", (c) => c.redirect(PAGE_PATH, 308));
  app.get(PAGE_PATH, (c) =>
    c.html(INDEX, 200, { ...SECURITY_HEADERS, "cache-control": "no-cache" }),
  );
  app.get(`${PAGE_PATH}icon.svg`, (c) =>
    c.body(ICON, 200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400" }),
  );
  // Browsers ask for it whatever the page says.
  app.get("/favicon.ico", (c) => c.redirect(`${PAGE_PATH}icon.svg`, 301));
  app.get(`${PAGE_PATH}:file{page\\.(js|css)}`, async (c) => {
    // A load that failed is tried again by the next request.
    assets ??= loadAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    const asset = (await assets).get(c.req.param("file"));
    if (!asset) return c.notFound();
    const accepted = c.req.header("accept-encoding") ?? "";
    const [body, encoding] =
      asset.br && /\bbr\b/.test(accepted)
        ? [asset.br, "br"]
        : asset.gz && /\bgzip\b/.test(accepted)
          ? [asset.gz, "gzip"]
          : [asset.plain, null];
    return c.body(new Uint8Array(body), 200, {
      ...SECURITY_HEADERS,
      "content-type": asset.type,
      "cache-control": "no-cache",
      vary: "accept-encoding",
      ...(encoding ? { "content-encoding": encoding } : {}),
    });
  });
}
