/**
 * The page of `tableminds ui` in a real browser (Debian's chromium), on the local server and the
 * stub model: how soon it paints, how soon a question's first progress line shows, and what it
 * weighs. Side by side in one run, against floors measured the same way:
 *
 * - first paint of /ui/ in a fresh browser context, against a blank page of the same server;
 * - the first progress line on the page after Ask, against the first custom event of the same
 *   run streamed by the SDK from Node (the API's own latency);
 * - the answer drawn on the page, against `runs.wait` of the same question;
 * - the bytes the browser receives for the page (compressed, as sent) and as built.
 *
 *   npm run bench:page [-- <rounds, default 5>]
 */
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import type { Page } from "playwright-core";
import { closeSandboxes } from "../sandbox/index.js";
import { createLocalServer } from "../server/local.js";
import { launchBrowser, listenLocal } from "../tests/support/browser.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../tests/support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../tests/support/scripts.js";
import { startStubOpenAI } from "../tests/support/stub-openai.js";

const ROUNDS = Number(process.argv[2] ?? 5);
const MEDALS = path.join(EXAMPLES, "olympics_2020_medals.csv");

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** First contentful paint of the page now open, from the browser's own timing. */
function firstPaint(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const seen = (list: { getEntries(): { name: string; startTime: number }[] }) => {
          const entry = list.getEntries().find((e) => e.name === "first-contentful-paint");
          if (entry) resolve(entry.startTime);
        };
        const Observer = (
          globalThis as unknown as {
            PerformanceObserver: new (cb: typeof seen) => { observe(o: object): void };
          }
        ).PerformanceObserver;
        new Observer(seen).observe({ type: "paint", buffered: true });
      }),
  );
}

async function main() {
  useTempHome();
  const stub = await startStubOpenAI({ respond: medalsTeam() });
  useStubEndpoint(stub.url);
  const server = await createLocalServer();
  const listening = await listenLocal(server);
  const browser = await launchBrowser();
  const client = new Client({ apiUrl: listening.url });
  const upload = async () => {
    const reply = await fetch(`${listening.url}/tables?name=olympics_2020_medals.csv`, {
      method: "POST",
      body: new Uint8Array(await import("node:fs").then((fs) => fs.readFileSync(MEDALS))),
    });
    return ((await reply.json()) as { source: object }).source;
  };
  const source = await upload();
  const input = { question: MEDALS_QUESTION, sources: [source] };

  const paints: number[] = [];
  const blanks: number[] = [];
  const pageFirstLine: number[] = [];
  const pageAnswer: number[] = [];
  const apiFirstEvent: number[] = [];
  const apiAnswer: number[] = [];
  let sent = 0;
  let built = 0;
  const loadBefore = os.loadavg()[0] ?? 0;

  // One warm-up of each path (the graphs' first run, the browser's first page).
  await client.runs.wait(null, "table_qa", { input });

  for (let round = 0; round < ROUNDS; round++) {
    // A blank page of the same server (its /ok), then the page, each in a fresh context.
    const blankContext = await browser.newContext();
    const blank = await blankContext.newPage();
    await blank.goto(`${listening.url}/ok`);
    blanks.push(await firstPaint(blank));
    await blankContext.close();

    const context = await browser.newContext();
    const page = await context.newPage();
    let bytes = 0;
    page.on("response", async (r) => {
      if (!r.url().includes("/ui/")) return;
      const sizes = await r.request().sizes();
      bytes += sizes.responseBodySize;
    });
    await page.goto(`${listening.url}/ui/`);
    paints.push(await firstPaint(page));
    sent = bytes;
    await page.setInputFiles("input[type=file]", MEDALS);
    await page
      .getByRole("list", { name: "tables" })
      .getByText("olympics_2020_medals.csv")
      .waitFor();
    await page.locator("#tm-question").fill(MEDALS_QUESTION);
    const asked = performance.now();
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    await page.locator(".tm-progress li").first().waitFor();
    pageFirstLine.push(performance.now() - asked);
    await page.locator("section.tm-answer").waitFor();
    pageAnswer.push(performance.now() - asked);
    await context.close();

    // The same run through the SDK from Node: the first custom event, then the end.
    const started = performance.now();
    let first = 0;
    for await (const part of client.runs.stream(null, "table_qa", {
      input,
      streamMode: ["custom"],
      streamSubgraphs: true,
    })) {
      if (!first && part.event.startsWith("custom")) first = performance.now() - started;
    }
    apiFirstEvent.push(first);
    const waited = performance.now();
    await client.runs.wait(null, "table_qa", { input });
    apiAnswer.push(performance.now() - waited);
  }

  const fs = await import("node:fs");
  for (const name of ["page.js", "page.css"]) {
    const dir = path.join(process.cwd(), "node_modules", ".cache", "tableminds", "ui");
    const file = path.join(dir, name);
    if (fs.existsSync(file)) built += fs.statSync(file).size;
  }

  const row = (what: string, page: number[], floor: number[], against: string) =>
    console.log(
      `${what.padEnd(28)} ${ms(median(page)).padStart(8)}   ${against.padEnd(34)} ${ms(median(floor)).padStart(8)}   ${(median(page) / Math.max(median(floor), 1)).toFixed(2)}x`,
    );
  console.log(
    `the page in chromium, ${ROUNDS} rounds (medians), ${os.availableParallelism()} cores, load ${loadBefore.toFixed(2)} before and ${(os.loadavg()[0] ?? 0).toFixed(2)} after`,
  );
  row("first paint of /ui/", paints, blanks, "a blank page of the same server");
  row("first progress line", pageFirstLine, apiFirstEvent, "first custom event, SDK from Node");
  row("answer drawn", pageAnswer, apiAnswer, "runs.wait, SDK from Node");
  console.log(
    `page assets: ${(sent / 1024).toFixed(0)} KiB sent (compressed), ${(built / 1024).toFixed(0)} KiB as built (script and stylesheet), nothing from elsewhere`,
  );

  await browser.close();
  await listening.close();
  await server.close();
  await stub.close();
  await closeSandboxes();
}

await main();
