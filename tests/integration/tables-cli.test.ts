import { writeFileSync } from "node:fs";
import path from "node:path";
import { utils, write } from "@e965/xlsx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { answerFromOutput } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { fixtureDir } from "../support/table-fixtures.js";

const JOIN_CODE = [
  "```python",
  'merged = sales.merge(regions_cities, on="city")',
  'total = merged[merged["region"] == "North"]["amount"].sum()',
  "print(total)",
  "```",
].join("\n");

describe("tableminds ask over several tables and formats", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  let dir: string;

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: (req) => {
        if (req.role === "planner")
          return "<plan>\n1. Join sales to regions on city.\n2. Sum North.\n</plan>";
        if (req.role === "coder") {
          const asked = req.messages.map((m) => m.content).join("\n");
          return asked.includes("`latin`") ? "```python\nprint(len(latin))\n```" : JOIN_CODE;
        }
        if (req.role === "answerer") return answerFromOutput(req);
        return { status: 500, content: `no reply for ${req.role}` };
      },
    });
    env = stubEnv(stub.url);
    dir = fixtureDir();
    writeFileSync(path.join(dir, "sales.csv"), "city,amount\nOslo,10\nBergen,5\nRoma,7\nOslo,1\n");
    const book = utils.book_new();
    utils.book_append_sheet(
      book,
      utils.aoa_to_sheet([
        ["city", "region"],
        ["Oslo", "North"],
        ["Bergen", "North"],
        ["Roma", "South"],
      ]),
      "cities",
    );
    utils.book_append_sheet(book, utils.aoa_to_sheet([["note"], ["kept"]]), "notes");
    writeFileSync(
      path.join(dir, "regions.xlsx"),
      write(book, { type: "buffer", bookType: "xlsx" }),
    );
    writeFileSync(
      path.join(dir, "latin.csv"),
      Buffer.from("city,amount\nZürich,3\nMünchen,4\n", "latin1"),
    );
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("takes table files then the question, and joins a CSV with a workbook sheet", async () => {
    const result = await runCli(
      [
        "ask",
        path.join(dir, "sales.csv"),
        path.join(dir, "regions.xlsx"),
        "Total North sales?",
        "--no-memory",
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^ingest\s+sales \(4 rows x 2 columns\), regions_cities \(3 rows x 2 columns\), regions_notes \(1 rows x 1 columns\)$/m,
    );
    expect(result.stdout).toMatch(/^Answer: 16$/m);
    const planner = stub.requests.find((r) => r.role === "planner");
    const prompt = planner?.messages.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("sales");
    expect(prompt).toContain("regions_cities");
  }, 60_000);

  it("reads a text table in the encoding --encoding names, without guessing", async () => {
    const args = ["ask", path.join(dir, "latin.csv"), "Sum?", "--no-memory", "--quiet"];
    const guessed = await runCli(args, env);
    expect(guessed.stderr).toContain("read as windows-1252 text (detected");
    const named = await runCli([...args, "--encoding", "latin1"], env);
    expect(named.stderr).not.toContain("detected");
    const unknown = await runCli([...args, "--encoding", "klingon"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe(
      'tableminds: unknown encoding "klingon" for --encoding (e.g. utf-8, windows-1252, latin1, shift_jis, gb18030, utf-16le)',
    );
  }, 60_000);

  it("says a question must be quoted, and needs one", async () => {
    const bare = await runCli(["ask", path.join(dir, "sales.csv"), "How", "many?"], env);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('"How" is not a table file: put the question in quotes');
    const none = await runCli(["ask", path.join(dir, "sales.csv")], env);
    expect(none.stderr).toContain("missing the question after the table");
  });

  it("prunes the artifact store: a dry run lists, a real one frees", async () => {
    const dry = await runCli(["prune", "--older-than", "0", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^would remove .*\.csv \(/m);
    expect(dry.stdout).toMatch(/^would free [\d.]+ (?:B|KB|MB) in \d+ files of /m);
    const real = await runCli(["prune", "--older-than", "0"], env);
    expect(real.stdout).toMatch(/^freed [\d.]+ (?:B|KB|MB) in \d+ files of /m);
    const after = await runCli(["prune", "--older-than", "0", "--dry-run"], env);
    expect(after.stdout).toMatch(/^would free 0 B in 0 files/m);
  });
});
