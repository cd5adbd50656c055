import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import {
  auditDir,
  auditRun,
  listAuditRuns,
  readAuditRun,
  recordLocalCall,
} from "../../models/audit.js";
import { guardedFetch } from "../../models/fetch.js";
import { recall } from "../../nodes/recall.js";
import type { NodeRuntime } from "../../nodes/runtime.js";
import type { Configuration } from "../../settings/configuration.js";
import { encodeVector, OFFLINE_ID, offlineEmbed } from "../../storage/memory/embeddings.js";
import {
  EPISODE_VERSION,
  type Episode,
  memoryNamespace,
  questionPattern,
} from "../../storage/memory/episodes.js";
import { tableSchema } from "../../storage/memory/table-schema.js";
import { privacyOf, privateTableContexts } from "../../tables/privacy.js";
import { tableFacts } from "../../tables/privacy-facts.js";
import { LARGE_TABLE_ROWS } from "../../tables/profile.js";
import { useTempHome } from "../support/env.js";
import { tableRef } from "../support/table-fixtures.js";

useTempHome();

const CSV = [
  "item,amount,ok,code",
  "Widget,12.5,True,Kx",
  "ZQX-canary-7741,987654.321,False,Q7",
  "Sprocket,1500000.75,True,",
  "Widget,40,True,Rb",
].join("\n");
const COLUMNS: TableRef["columns"] = [
  { name: "item", dtype: "object" },
  { name: "amount", dtype: "float64", reading: 'currency "$987,654.32" -> 987654.32' },
  { name: "ok", dtype: "bool" },
  { name: "code", dtype: "object" },
];

describe("what the privacy modes read of a stored table", () => {
  it("gives the same facts parsed in Node and read by DuckDB (a large table's way)", async () => {
    const ref = await tableRef("ledger", CSV, COLUMNS);
    const small = await tableFacts(ref);
    // A reference that claims more rows than Node parses takes DuckDB's path.
    const large = await tableFacts({ ...ref, rows: LARGE_TABLE_ROWS + 1 });
    const sorted = (f: typeof small) => ({
      ...f,
      texts: [...f.texts].sort(),
      numbers: [...f.numbers].sort((a, b) => a - b),
    });
    expect(sorted(large)).toEqual(sorted(small));
    expect(small.rows).toBe(4);
    expect(small.columns[1]?.numbers).toEqual({
      min: 12.5,
      max: 1500000.75,
      mean: (12.5 + 987654.321 + 1500000.75 + 40) / 4,
    });
    expect(small.columns[2]?.booleans).toEqual({ trueCount: 3, falseCount: 1 });
    expect(small.columns[3]).toMatchObject({ distinct: 3, missing: 1 });
    expect(sorted(small).texts).toEqual([
      "Kx",
      "Q7",
      "Rb",
      "Sprocket",
      "Widget",
      "ZQX-canary-7741",
    ]);
  });

  it("shows aggregates under values, names and types under schema, and no cell either way", async () => {
    const ref: TableRef = {
      ...(await tableRef("ledger", CSV, COLUMNS)),
      reading: {
        title: ["Ledger of ZQX-canary-7741"],
        totals: { rows: [7], labels: ["Q7 total"] },
      },
    };
    const [valuesText] = await privateTableContexts([ref], "values", 3000);
    const [schemaText] = await privateTableContexts([ref], "schema", 3000);
    expect(valuesText).toContain("- `amount` (float64): 12.5 to 1500000, mean 621927");
    expect(valuesText).toContain("- `ok` (bool): 3 true, 1 false");
    expect(valuesText).toContain("1 total row left out of the data");
    expect(schemaText).toContain("- `amount` (float64)\n");
    expect(schemaText).not.toMatch(/12\.5|\d+ rows/);
    for (const text of [valuesText, schemaText]) {
      expect(text).not.toMatch(/canary|987|Q7|Widget|\$/);
    }
  });

  it("scrubs a finished prompt of the cells of the run's tables", async () => {
    const ref = await tableRef("ledger", CSV, COLUMNS);
    const privacy = await privacyOf({ tables: [ref], question: "Is Widget cheap?" }, "values");
    expect(privacy.scrub("Widget and Sprocket cost 987654.321 and 1500000.75")).toBe(
      "Widget and [hidden] cost [hidden] and 1500000.75",
    );
  });
});

describe("memory under a privacy mode", () => {
  const TABLES: Pick<TableRef, "columns">[] = [{ columns: COLUMNS }];

  function episode(question: string, privacy?: Episode["privacy"]): Episode {
    return {
      version: EPISODE_VERSION,
      question,
      pattern: questionPattern(question),
      columns: tableSchema(TABLES),
      verified: ["derived"],
      plan: ["Filter the amount column."],
      lessons: [`the answer was ${question.includes("Gizmo") ? "Gizmo" : "Widget"}`],
      pitfalls: [],
      answer: "",
      episodes: 1,
      embedding: encodeVector(offlineEmbed(questionPattern(question))),
      embedder: OFFLINE_ID,
      ...(privacy ? { privacy } : {}),
    };
  }

  async function recalled(context: Partial<Configuration>, stored: Episode[]) {
    const store = new InMemoryStore();
    for (const [i, e] of stored.entries()) await store.put(memoryNamespace("p"), `e${i}`, e);
    const runtime = {
      store,
      context: { memoryNamespace: "p", ...context },
      writer: () => {},
      interrupt: () => undefined,
      signal: new AbortController().signal,
    } as unknown as NodeRuntime;
    const ref = await tableRef("ledger", CSV, COLUMNS);
    const state = { question: "Which item costs the most?", tables: [ref] };
    const out = await recall(state as Parameters<typeof recall>[0], runtime);
    return (out as { memories?: { question: string }[] }).memories ?? [];
  }

  it("recalls only episodes archived under a mode at least as strict", async () => {
    const open = episode("Which item costs the most?");
    const valuesOnly = episode("Which item costs the least?", "values");
    const both = [open, valuesOnly];
    expect((await recalled({ privacy: "off" }, both)).map((m) => m.question)).toHaveLength(2);
    expect((await recalled({ privacy: "values" }, both)).map((m) => m.question)).toEqual([
      valuesOnly.question,
    ]);
    expect(await recalled({ privacy: "schema" }, both)).toEqual([]);
  });
});

describe("the audit log", () => {
  const bodies: { body: string; auth: string | undefined; logged: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      // The line is written before the request leaves: it is there when the request arrives.
      const logged = readAuditRun("audit-test")
        .map((e) => e.body ?? "")
        .join("\n");
      bodies.push({ body, auth: req.headers.authorization, logged });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  const listening = new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    }),
  );
  afterAll(() => {
    server.close();
  });

  it("writes each request's URL and body before sending it, never its headers", async () => {
    const host = await listening;
    const body = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] });
    await auditRun("audit-test", async () => {
      const sent = await guardedFetch(5_000)(`http://${host}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer sk-secret-key-123", "content-type": "application/json" },
        body,
      });
      await sent.text();
      recordLocalCall("qwen", "/models/qwen.gguf");
    });
    expect(bodies.at(-1)).toMatchObject({ body, auth: "Bearer sk-secret-key-123" });
    expect(bodies.at(-1)?.logged).toContain(body);
    const file = path.join(auditDir(), "audit-test.jsonl");
    const raw = readFileSync(file, "utf8");
    expect(raw).not.toContain("sk-secret-key");
    const entries = readAuditRun("audit-test");
    expect(entries.map((e) => [e.kind, e.endpoint, e.model, e.bytes])).toEqual([
      ["request", `http://${host}/v1/chat/completions`, "m1", Buffer.byteLength(body)],
      ["local", "local:/models/qwen.gguf", "qwen", 0],
    ]);
    expect(entries.every((e) => e.run === "audit-test")).toBe(true);

    // A line cut short by a crash is skipped, the rest still read.
    writeFileSync(file, `${raw}{"id": "torn`);
    expect(readAuditRun("audit-test")).toHaveLength(2);
    const summary = listAuditRuns().find((r) => r.run === "audit-test");
    expect(summary).toMatchObject({ requests: 1, localCalls: 1, bytes: Buffer.byteLength(body) });
  });
});

describe("the values scrub over what pandas says", () => {
  afterAll(async () => {
    const { closeSandboxes } = await import("../../sandbox/index.js");
    await closeSandboxes();
  });

  it("leaves no canary cell in the errors of code run over the table", async () => {
    const { getSandbox } = await import("../../sandbox/index.js");
    const canaries = ["ZQX-canary-7741", "İSTANBUL-GİZLİ-5512", "qqq-secret-0042", "ÆØÅ-hush-9931"];
    const csv = [
      "name,city,amount",
      `${canaries[0]},foo bar,12`,
      `${canaries[2]},plain,7`,
      `Ann,${canaries[1]},3`,
      `Bob,${canaries[3]},5`,
    ].join("\n");
    const table = await tableRef("canaries", csv, [
      { name: "name", dtype: "object" },
      { name: "city", dtype: "object" },
      { name: "amount", dtype: "int64" },
    ]);
    const privacy = await privacyOf(
      { tables: [table], question: "What is the total amount?" },
      "values",
    );
    const codes = [
      // pandas 1.5 glues a column's cells into one word here: "Could not convert ZQX…AnnBob".
      "df['name'].mean()",
      "df['city'].mean()",
      "pd.to_numeric(df['name'])",
      "df['name'].astype(float)",
      "df['city'].astype(int)",
      "df['name'].sum() + 1",
      "df.pivot(index='amount', columns='city', values='name').loc[99]",
      "df.set_index('name').loc['nobody']",
      "int(df['city'].iloc[0])",
      "df[df['name'] == df['city'].iloc[1]]['amount'].iloc[0]",
      "df['name'].str.cat(sep='') + 5",
      "pd.DataFrame({'x': df['name']}).astype('int64')",
    ];
    const sandbox = await getSandbox("local");
    let errors = 0;
    for (const code of codes) {
      const result = await sandbox.execute({ code, tables: [table] });
      const said = `${result.error?.message ?? ""}\n${result.stderr}`;
      if (result.error) errors++;
      const scrubbed = privacy.scrub(said).toLowerCase();
      for (const canary of canaries) {
        expect([code, scrubbed.includes(canary.toLowerCase())]).toEqual([code, false]);
        expect([code, scrubbed.includes(canary.slice(4).toLowerCase())]).toEqual([code, false]);
      }
    }
    // The codes do fail, and their messages do quote cells: the scrub had work to do.
    expect(errors).toBeGreaterThanOrEqual(10);
  });
});
