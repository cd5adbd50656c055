/**
 * Input bombs (issue 22, item 5), read before and after the workbook limits, side by side:
 * a workbook of 1.5 GB of XML in a few MB, one of 25 million cells in under a MB, one of 20,000
 * one-cell rows whose sheet claims all 16,384 columns (each row is read that wide), and an
 * ordinary one of a million cells for what the check costs. Each is read by gridsFromWorkbook in a fresh process: "before" with no
 * limits (the reading as it was), "after" with the defaults. Peak RSS is the process's own
 * high-water mark (read from /proc while it runs, so a process killed at the time limit has one
 * too); "above start" subtracts its RSS before reading. The files are written streaming, into a
 * temporary directory removed at the end.
 *
 *   npm run bench:xlsx-bomb [timeLimitSeconds=180]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { crc32, createDeflateRaw } from "node:zlib";
import { MAIN, SHEET_PART, WORKBOOK_SKELETON } from "../tests/support/workbook-xml.js";

const HERE = import.meta.filename;
const MiB = 1024 * 1024;

// --- writing the workbooks, streaming -----------------------------------------------------

interface Part {
  name: string;
  /** The part's content, in pieces: never held whole. */
  content: () => Iterable<string | Buffer>;
}

/** A local file header for a deflated part whose sizes follow its data (flag 8). */
function localHeader(name: Buffer): Buffer {
  const head = Buffer.alloc(30);
  head.writeUInt32LE(0x04034b50, 0);
  head.writeUInt16LE(20, 4); // version needed
  head.writeUInt16LE(8, 6); // flags: sizes in a record after the data
  head.writeUInt16LE(8, 8); // method: deflate
  head.writeUInt16LE(name.length, 26);
  return Buffer.concat([head, name]);
}

/** The record after a part's data: its CRC and sizes. */
function dataDescriptor(crc: number, compressed: number, size: number): Buffer {
  const record = Buffer.alloc(16);
  record.writeUInt32LE(0x08074b50, 0);
  record.writeUInt32LE(crc, 4);
  record.writeUInt32LE(compressed, 8);
  record.writeUInt32LE(size, 12);
  return record;
}

function centralHeader(name: Buffer, sizes: Buffer, offset: number): Buffer {
  const head = Buffer.alloc(46);
  head.writeUInt32LE(0x02014b50, 0);
  head.writeUInt16LE(20, 4); // made by
  head.writeUInt16LE(20, 6); // version needed
  head.writeUInt16LE(8, 8); // flags
  head.writeUInt16LE(8, 10); // method
  sizes.copy(head, 16, 4, 16); // CRC, compressed and unzipped sizes
  head.writeUInt16LE(name.length, 28);
  head.writeUInt32LE(offset, 42);
  return Buffer.concat([head, name]);
}

function endRecord(parts: number, size: number, offset: number): Buffer {
  const record = Buffer.alloc(22);
  record.writeUInt32LE(0x06054b50, 0);
  record.writeUInt16LE(parts, 8);
  record.writeUInt16LE(parts, 10);
  record.writeUInt32LE(size, 12);
  record.writeUInt32LE(offset, 16);
  return record;
}

/** Writes `parts` deflated into a zip at `file`, each part's sizes after its data; the unzipped size. */
async function writeZip(file: string, parts: Part[]): Promise<number> {
  const handle: FileHandle = await open(file, "w");
  let offset = 0;
  let unzipped = 0;
  const put = async (bytes: Buffer) => {
    await handle.write(bytes);
    offset += bytes.length;
  };
  const central: Buffer[] = [];
  try {
    for (const part of parts) {
      const name = Buffer.from(part.name);
      const start = offset;
      await put(localHeader(name));
      let crc = 0;
      let size = 0;
      const source = Readable.from(
        (function* () {
          for (const piece of part.content()) {
            const bytes = Buffer.from(piece);
            crc = crc32(bytes, crc);
            size += bytes.length;
            yield bytes;
          }
        })(),
      );
      const deflate = createDeflateRaw({ level: 9 });
      source.pipe(deflate);
      let compressed = 0;
      for await (const out of deflate as AsyncIterable<Buffer>) {
        await put(out);
        compressed += out.length;
      }
      unzipped += size;
      const sizes = dataDescriptor(crc, compressed, size);
      await put(sizes);
      central.push(centralHeader(name, sizes, start));
    }
    const directory = Buffer.concat(central);
    const at = offset;
    await put(directory);
    await put(endRecord(parts.length, directory.length, at));
  } finally {
    await handle.close();
  }
  return unzipped;
}

/** A one-sheet workbook whose sheet XML is `sheet`. */
function workbook(sheet: () => Iterable<string | Buffer>): Part[] {
  return [
    ...WORKBOOK_SKELETON.map(({ name, xml }) => ({ name, content: () => [xml] })),
    { name: SHEET_PART, content: sheet },
  ];
}

const TABLE =
  '<row r="1"><c r="A1" t="inlineStr"><is><t>city</t></is></c><c r="B1" t="inlineStr"><is><t>n</t></is></c></row>' +
  '<row r="2"><c r="A2" t="inlineStr"><is><t>Oslo</t></is></c><c r="B2"><v>1</v></c></row>';

/** A two-row table followed by `bytes` of XML comment: bytes to unzip, hardly any cells. */
function* paddedSheet(bytes: number): Generator<string | Buffer> {
  yield `<worksheet xmlns="${MAIN}"><sheetData>${TABLE}</sheetData><!--`;
  const block = Buffer.alloc(MiB, "padding ");
  for (let left = bytes; left > 0; left -= block.length) {
    yield left >= block.length ? block : block.subarray(0, left);
  }
  yield "--></worksheet>";
}

/** `rows` rows of `columns` cells: the same row again and again, without addresses. */
function* gridSheet(rows: number, columns: number): Generator<string> {
  yield `<worksheet xmlns="${MAIN}"><sheetData>`;
  const row = `<row>${"<c><v>1</v></c>".repeat(columns)}</row>`;
  for (let r = 0; r < rows; r++) yield row;
  yield "</sheetData></worksheet>";
}

/** An ordinary sheet: a header, then `rows` rows of ten addressed cells, text and numbers. */
function* ordinarySheet(rows: number): Generator<string> {
  const letters = "ABCDEFGHIJ";
  const head = [...letters].map((l, c) => `<c r="${l}1" t="inlineStr"><is><t>col${c}</t></is></c>`);
  yield `<worksheet xmlns="${MAIN}"><dimension ref="A1:J${rows + 1}"/><sheetData><row r="1">${head.join("")}</row>`;
  for (let r = 2; r <= rows + 1; r++) {
    const cells = [...letters].map((l, c) =>
      c % 2 === 0
        ? `<c r="${l}${r}" t="inlineStr"><is><t>name ${r % 1000}</t></is></c>`
        : `<c r="${l}${r}"><v>${r * 1.5 + c}</v></c>`,
    );
    yield `<row r="${r}">${cells.join("")}</row>`;
  }
  yield "</sheetData></worksheet>";
}

/** `rows` rows of one cell each, in a range the dimension claims all 16,384 columns wide. */
function* wideSheet(rows: number): Generator<string> {
  yield `<worksheet xmlns="${MAIN}"><dimension ref="A1:XFD${rows}"/><sheetData>`;
  for (let r = 1; r <= rows; r++) yield `<row r="${r}"><c r="A${r}"><v>${r}</v></c></row>`;
  yield "</sheetData></worksheet>";
}

// --- reading them, in a child process -----------------------------------------------------

interface Reading {
  ms: number;
  startMb: number;
  peakMb: number;
  outcome: string;
  killed?: boolean;
}

/** The child: reads `file` with no limits ("before") or the defaults ("after"). */
async function child(mode: string, file: string): Promise<void> {
  const { gridsFromWorkbook } = await import("../tables/xlsx.js");
  const { workbookLimits } = await import("../tables/xlsx-limits.js");
  const limits =
    mode === "before"
      ? { maxBytes: Number.POSITIVE_INFINITY, maxCells: Number.POSITIVE_INFINITY }
      : workbookLimits(file);
  const bytes = readFileSync(file);
  const startMb = process.memoryUsage().rss / MiB;
  const started = performance.now();
  let outcome: string;
  try {
    const sheets = gridsFromWorkbook(bytes, file, limits);
    outcome = `read: ${sheets.map((s) => `${s.grid.rows.length} rows`).join(", ")}`;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    outcome = message.replace(`cannot load table ${file}: `, "");
  }
  const ms = performance.now() - started;
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ ms, startMb, peakMb, outcome })}\n`);
}

/** The high-water mark of a process's RSS, in MB, or 0 where /proc has none. */
function highWater(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

function read(mode: "before" | "after", file: string, limitMs: number): Promise<Reading> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const proc = spawn(process.execPath, ["--import", "tsx", HERE, "--child", mode, file], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    let peak = 0;
    let killed = false;
    proc.stdout.on("data", (d) => {
      stdout += d;
    });
    const poll = setInterval(() => {
      if (proc.pid) peak = Math.max(peak, highWater(proc.pid));
    }, 100);
    const timer = setTimeout(() => {
      killed = true;
      proc.kill("SIGKILL");
    }, limitMs);
    proc.on("error", reject);
    proc.on("close", (code, signal) => {
      clearInterval(poll);
      clearTimeout(timer);
      const ms = performance.now() - started;
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (!killed && last.startsWith("{")) {
        const reading = JSON.parse(last) as Reading;
        resolve({ ...reading, peakMb: Math.max(reading.peakMb, peak) });
      } else {
        const oom = /heap out of memory/.test(stderr) ? ": JavaScript heap out of memory" : "";
        const outcome = killed
          ? `killed at the ${limitMs / 1000} s limit`
          : `died (${signal ?? `exit ${code}`}${oom})`;
        resolve({ ms, startMb: 0, peakMb: peak, outcome, killed });
      }
    });
  });
}

// --- the table ----------------------------------------------------------------------------

const mb = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const secs = (ms: number) => (ms >= 10_000 ? (ms / 1000).toFixed(0) : (ms / 1000).toFixed(2));

function cell(r: Reading): string {
  const above = r.startMb > 0 ? ` (+${mb(r.peakMb - r.startMb)})` : "";
  const time = `${r.killed ? ">" : ""}${secs(r.ms)} s`;
  return `${time.padStart(8)} ${`${mb(r.peakMb)} MB${above}`.padEnd(19)}`;
}

async function main(): Promise<void> {
  const limitMs = Number(process.argv[2] ?? 180) * 1000;
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-xlsx-bomb-"));
  const cases: [name: string, file: string, parts: Part[]][] = [
    ["1.5 GB of XML", "xml-bomb.xlsx", workbook(() => paddedSheet(1536 * MiB))],
    ["25M cells", "cell-bomb.xlsx", workbook(() => gridSheet(5000, 5000))],
    ["20K rows, A1:XFD20000", "range-bomb.xlsx", workbook(() => wideSheet(20_000))],
    ["ordinary, 1M cells", "ordinary.xlsx", workbook(() => ordinarySheet(100_000))],
  ];
  try {
    console.log(
      `workbook                 file unzipped | before: time  peak RSS (above start) | after: time  peak RSS (above start) | after: outcome`,
    );
    for (const [name, base, parts] of cases) {
      const file = path.join(dir, base);
      const unzipped = `${mb((await writeZip(file, parts)) / MiB)} MB`;
      const size = `${mb(statSync(file).size / MiB)} MB`;
      const before = await read("before", file, limitMs);
      const after = await read("after", file, limitMs);
      console.log(
        `${name.padEnd(21)} ${size.padStart(7)} ${unzipped.padStart(8)} |${cell(before)}     |${cell(after)}     | ${after.outcome}`,
      );
      console.log(`${"".padEnd(39)}   before: ${before.outcome}`);
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3] ?? "after", process.argv[4] ?? "");
else await main();
