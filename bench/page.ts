/**
 * The page of `tableminds ui` in a real browser (Debian's chromium), on the local server and the
 * stub model: how soon it paints, how soon a question's first progress line shows, and what it
 * weighs. Side by side in one run, against floors measured the same way:
 *
 * - first paint of /ui/ in a fresh browser context, and the page ready to pick a table (React
 *   drawn), against a one-line page's first paint in the same browser;
 * - the first progress line on the page after Ask (a new thread), against the same line of the
 *   same run streamed by the SDK from Node on a thread made beforehand (the API's own latency);
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

/** First contentful paint of the page now open, from the browser's own timing; NaN if none in 10 s. */
async function firstPaint(page: Page): Promise<number> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const at = await page.evaluate(() => {
      const timing = (
        globalThis as unknown as {
          performance: { getEntriesByName(n: string): { startTime: number }[] };
        }
      ).performance;
      return timing.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
    });
    if (at !== null) return at;
    await page.waitForTimeout(50);
  }
  return Number.NaN;
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
  const ready: number[] = [];
  const blanks: number[] = [];
  const pageFirstLine: number[] = [];
  const pageAnswer: number[] = [];
  const apiFirstEvent: number[] = [];
  const apiAnswer: number[] = [];
  let sent = 0;
  let built = 0;
  const loadBefore = os.loadavg()[0] ?? 0;

  // One warm-up of each path (the graphs' first run, the browser's first page).
  process.stderr.write("bench:page: warming up\n");
  const thread = async () => (await client.threads.create()).thread_id;
  await client.runs.wait(await thread(), "table_qa", { input });

  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`bench:page: round ${round + 1} of ${ROUNDS}\n`);
    // A one-line page, then the page, each in a fresh context.
    const blankContext = await browser.newContext();
    const blank = await blankContext.newPage();
    await blank.setContent("<p>blank</p>");
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
    await page.locator("input[type=file]").waitFor();
    ready.push(
      await page.evaluate(() =>
        (globalThis as unknown as { performance: { now(): number } }).performance.now(),
      ),
    );
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
    for await (const part of client.runs.stream(await thread(), "table_qa", {
      input,
      streamMode: ["custom"],
      streamSubgraphs: true,
    })) {
      // The first event the page shows: a progress line (a node whose update makes none sends null).
      const data = part.data as { event?: string; line?: string | null } | undefined;
      const shown = part.event.startsWith("custom") && data?.event === "progress" && data.line;
      if (!first && shown) first = performance.now() - started;
    }
    apiFirstEvent.push(first);
    const waitedOn = await thread();
    const waited = performance.now();
    await client.runs.wait(waitedOn, "table_qa", { input });
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
  row("first paint of /ui/", paints, blanks, "a one-line page (the browser's floor)");
  row("page ready (table picker)", ready, blanks, "a one-line page (the browser's floor)");
  row("first progress line", pageFirstLine, apiFirstEvent, "the same line, SDK stream from Node");
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

await main().catch((error: unknown) => {
  console.error(`bench:page: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
