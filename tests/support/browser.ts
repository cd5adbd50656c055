import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type Browser, chromium } from "playwright-core";
import type { LocalServer } from "../../server/local.js";

/*
 * A real browser for the page's tests and benchmark: Debian's chromium (scripts/setup-tests.sh
 * installs it), driven by playwright-core, which cannot download its own here.
 */

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export function chromiumPath(): string {
  const given = process.env.TABLEMINDS_CHROMIUM;
  const found = given ?? CANDIDATES.find((file) => existsSync(file));
  if (!found || !existsSync(found)) {
    throw new Error(
      "no chromium for the browser tests: run `bash scripts/setup-tests.sh` (apt-get install chromium) or set TABLEMINDS_CHROMIUM",
    );
  }
  return found;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    // The sandbox of chromium needs user namespaces, which a container often lacks.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** The local server listening on a free loopback port, and its address. */
export async function listenLocal(
  server: LocalServer,
): Promise<{ url: string; close(): Promise<void> }> {
  const listening = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: server.app.fetch, hostname: "127.0.0.1", port: 0 }, () =>
      resolve(started),
    );
  });
  const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  return {
    url,
    close: () => new Promise((resolve) => listening.close(() => resolve())),
  };
}
