import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Attempt, Verdict } from "../../blackboard/schemas.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { createLocalServer, type LocalServer } from "../../server/local.js";
import { launchBrowser, listenLocal } from "../support/browser.js";
import { CHART_CODE, CHART_QUESTION, chartTeam } from "../support/chart-team.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { FINANCE, financeWorkbookBytes } from "../support/messy-workbook.js";
import { answerFromOutput, lastMessage, MEDALS_PLAN, medalsTeam } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The page of `tableminds ui`, in a real browser (Debian's chromium through playwright-core),
 * on the local server and the stub model: a workbook read with its header paths, totals, notes
 * and hidden row marked; an answer whose lit cells are exactly its result's lineage; a follow-up
 * on the thread; a chart; a "not sure" answer; a cell of HTML shown as text; all by keyboard
 * too, with no console error. Each state is photographed (TABLEMINDS_SCREENSHOTS: where).
 */

const EAST_Q3 = "What was the revenue of East in Q3?";
const FOLLOW_UP = "And in Q4?";
const WRONG_COLUMN = "How many silver medals did these ten nations win in total?";
const ROWS_QUESTION = "How many rows does the table have?";
const HOSTILE = '<img src=x onerror="window.__hostile=1">';

const fenced = (lines: string[]) => ["```python", ...lines, "```"].join("\n");

/** One stub team for every question here, told apart by the question the prompt carries. */
function pageTeam() {
  const medals = medalsTeam();
  const chart = chartTeam(CHART_CODE.right);
  return (req: StubRequest) => {
    const asked = /^Question: (.*)$/m.exec(lastMessage(req))?.[1] ?? "";
    if (asked === CHART_QUESTION) return chart(req);
    if (req.role === "answerer") return answerFromOutput(req);
    if (req.role === "reflector") return "Diagnosis: the total looks off.\nRoute: coder";
    const quarter = asked === FOLLOW_UP ? "Q4" : asked === EAST_Q3 ? "Q3" : null;
    if (quarter && req.role === "planner")
      return `<plan>\n1. Find East's row.\n2. Read its Revenue / ${quarter}.\n</plan>`;
    if (quarter && req.role === "coder")
      return fenced([
        'east = df[df["Region"] == "East"]',
        `result = east["Revenue / ${quarter}"].iloc[0]`,
        "print(result)",
      ]);
    if (asked === ROWS_QUESTION && req.role === "coder") return fenced(["print(len(df))"]);
    if (asked === ROWS_QUESTION && req.role === "planner") return MEDALS_PLAN;
    // The silver question gets the gold code: another column than the one asked for.
    return medals(req);
  };
}

/** The browser's globals a test reads (the tests compile without the DOM's types). */
interface Focus {
  document: { activeElement: unknown };
}

interface ThreadValues {
  attempts: Attempt[];
  verdict: Verdict | null;
  answer: { final: string } | null;
}

describe("the page, in a browser", () => {
  let stub: StubServer;
  let server: LocalServer;
  let listening: Awaited<ReturnType<typeof listenLocal>>;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const shots = process.env.TABLEMINDS_SCREENSHOTS ?? mkdtempSync(path.join(os.tmpdir(), "shots-"));
  const files = mkdtempSync(path.join(os.tmpdir(), "page-files-"));

  async function shoot(name: string) {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  }

  async function values(threadId: string): Promise<ThreadValues> {
    const state = await new Client({ apiUrl: listening.url }).threads.getState(threadId);
    return state.values as unknown as ThreadValues;
  }

  /** The thread the page has open: the one marked current in the list. */
  async function openThread(): Promise<string> {
    const threads = await new Client({ apiUrl: listening.url }).threads.search({
      limit: 1,
      sortBy: "created_at",
      sortOrder: "desc",
    });
    const id = threads[0]?.thread_id;
    if (!id) throw new Error("no thread");
    return id;
  }

  async function ask(question: string) {
    const answers = await page.locator("section.tm-answer").count();
    await page.getByRole("textbox", { name: /Ask/ }).fill(question);
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    await page.locator("section.tm-answer").nth(answers).waitFor({ timeout: 90_000 });
    return page.locator("section.tm-answer").nth(answers);
  }

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({ respond: pageTeam() });
    useStubEndpoint(stub.url);
    server = await createLocalServer();
    listening = await listenLocal(server);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("response", (r) => {
      if (r.status() >= 400)
        problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    });
    writeFileSync(path.join(files, "regional_results.xlsx"), financeWorkbookBytes());
    writeFileSync(
      path.join(files, "hostile.csv"),
      `name,value\n"${HOSTILE.replaceAll('"', '""')}",1\nplain,2\n`,
    );
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await listening?.close();
    await server?.close();
    await stub?.close();
    await closeSandboxes();
  });

  it("serves the page under a strict Content-Security-Policy", async () => {
    const response = await page.goto(`${listening.url}/`);
    expect(page.url()).toBe(`${listening.url}/ui/`);
    const policy = response?.headers()["content-security-policy"] ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    await page.getByRole("button", { name: "New thread" }).waitFor();
  });

  it("reads the workbook: header paths, the total, notes and the hidden row marked", async () => {
    await page.setInputFiles("input[type=file]", path.join(files, "regional_results.xlsx"));
    await page.getByRole("list", { name: "tables" }).getByText("regional_results.xlsx").waitFor();
    const answer = await ask(EAST_Q3);
    const table = page.locator("section.tm-table").first();
    await table.waitFor();
    const headers = await table.locator("tr[data-kind=header]").allInnerTexts();
    expect(headers.join("\n")).toContain("Revenue");
    expect(headers.join("\n")).toContain("Q3");
    const total = table.locator("tr[data-kind=total]");
    expect(await total.count()).toBe(1);
    expect(await total.innerText()).toContain("11");
    const notes = await table.locator("tr[data-kind=note]").allInnerTexts();
    expect(notes.join("\n")).toContain(FINANCE.notes[0]);
    expect(await table.locator("tr[data-kind=hidden]").innerText()).toContain("8");
    // The data rows are numbered as the sheet numbers them: West, after the hidden row 8, is 9.
    const west = table.locator("tr[data-kind=data]", { hasText: "West" });
    expect(await west.locator("th").innerText()).toBe("9");
    expect(await table.innerText()).toContain("Title above the table");
    // An upload is cited by the name it came under, not by its bytes' hash.
    expect(await table.locator(".tm-source").first().innerText()).toBe(
      'regional_results.xlsx, sheet "Results"',
    );
    await shoot("1-workbook-answer");

    // The cells lit are exactly those the result's lineage names.
    const threadId = await openThread();
    const state = await values(threadId);
    const ran = state.attempts.filter((a) => a.result?.ok);
    expect(ran).toHaveLength(1);
    const lineage = ran[0]?.result?.result?.lineage ?? [];
    const expected = lineage.flatMap((l) =>
      (l.rows ?? []).flatMap((row) => (l.columns ?? []).map((column) => `${row}|${column}`)),
    );
    expect(expected.length).toBeGreaterThan(0);
    const lit: string[] = [];
    for (const cell of await answer.locator("td[data-lit=true]").all()) {
      lit.push(`${await cell.getAttribute("data-row")}|${await cell.getAttribute("data-column")}`);
    }
    expect([...new Set(lit)].sort()).toEqual([...new Set(expected)].sort());
    expect(await answer.locator("output").innerText()).toBe(state.answer?.final);
    expect(state.answer?.final).toBe(String(FINANCE.amounts[2]?.[2]));
    // The line that made the result is marked in the code.
    expect(await answer.locator("[data-result-line=true]").innerText()).toContain("Revenue / Q3");
  }, 180_000);

  it("asks a follow-up on the thread", async () => {
    const answer = await ask(FOLLOW_UP);
    expect(await answer.locator("output").innerText()).toBe(String(FINANCE.amounts[2]?.[3]));
    expect(await page.locator("section.tm-answer").count()).toBe(2);
    expect(await page.locator("nav[aria-label=threads] li").count()).toBe(1);
    await shoot("2-follow-up");
  }, 180_000);

  it("draws a chart", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.setInputFiles("input[type=file]", path.join(EXAMPLES, "olympics_2020_medals.csv"));
    await page
      .getByRole("list", { name: "tables" })
      .getByText("olympics_2020_medals.csv")
      .waitFor();
    const answer = await ask(CHART_QUESTION);
    const image = answer.locator("figure.tm-chart img");
    await image.waitFor();
    const width = () =>
      image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    await expect.poll(width).toBeGreaterThan(100);
    await shoot("3-chart");
  }, 180_000);

  it("shows an answer that rests on another column as not sure", async () => {
    const answer = await ask(WRONG_COLUMN);
    const state = await values(await openThread());
    expect(state.verdict?.sure).toBe(false);
    expect(await answer.getAttribute("data-status")).toBe("not sure");
    expect(await answer.locator(".tm-status").innerText()).toBe("Not sure");
    expect((await answer.locator(".tm-reasons li").count()) > 0).toBe(true);
    await shoot("4-not-sure");
  }, 240_000);

  it("pauses before the code runs, and runs the code as the person edited it", async () => {
    await page.getByRole("combobox", { name: "Review before" }).selectOption("code");
    await page.getByRole("textbox", { name: /Ask/ }).fill(ROWS_QUESTION);
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    const review = page.getByRole("region", { name: "review the code" });
    await review.waitFor({ timeout: 90_000 });
    const code = review.getByRole("textbox", { name: "code" });
    expect(await code.inputValue()).toContain("print(len(df))");
    await code.fill("rows = df.shape[0]\nprint(rows)");
    await shoot("5-review-code");
    await review.getByRole("button", { name: "Use my edit" }).click();
    const answer = page.locator("section.tm-answer").last();
    await expect
      .poll(() => answer.locator("pre.tm-code").first().innerText(), { timeout: 90_000 })
      .toContain("rows = df.shape[0]");
    expect(await answer.locator("output").innerText()).toBe("10");
    await page.getByRole("combobox", { name: "Review before" }).selectOption("off");
  }, 180_000);

  it("shows a cell of HTML as text, and works by keyboard alone", async () => {
    await page.locator("body").click({ position: { x: 1, y: 1 } });
    // To "New thread", then to the file input, which opens the file chooser on Space.
    const focusOn = async (target: ReturnType<Page["locator"]>, most = 40) => {
      for (let i = 0; i < most; i++) {
        await page.keyboard.press("Tab");
        if (
          await target.evaluate(
            (el) => el === (globalThis as unknown as Focus).document.activeElement,
          )
        )
          return;
      }
      throw new Error("the keyboard never reached it");
    };
    await focusOn(page.getByRole("button", { name: "New thread" }));
    await page.keyboard.press("Enter");
    await focusOn(page.locator("input[type=file]"));
    const chooser = page.waitForEvent("filechooser");
    await page.keyboard.press("Space");
    await (await chooser).setFiles(path.join(files, "hostile.csv"));
    await page.getByRole("list", { name: "tables" }).getByText("hostile.csv").waitFor();
    await focusOn(page.locator("#tm-question"));
    await page.keyboard.type(ROWS_QUESTION);
    await page.keyboard.press("Enter");
    const answer = page.locator("section.tm-answer");
    await answer.waitFor({ timeout: 90_000 });
    expect(await answer.locator("output").innerText()).toBe("2");
    const table = page.locator("section.tm-table", { hasText: "hostile" });
    expect(await table.locator("td", { hasText: "<img" }).first().innerText()).toBe(HOSTILE);
    expect(await page.locator(".tm-views img").count()).toBe(0);
    expect(
      await page.evaluate(() => typeof (globalThis as { __hostile?: unknown }).__hostile),
    ).toBe("undefined");
    await shoot("6-hostile-cell");
  }, 180_000);

  it("logged no console error or warning", () => {
    expect(problems).toEqual([]);
    expect(readFileSync(path.join(shots, "1-workbook-answer.png")).length).toBeGreaterThan(1000);
  });
});
