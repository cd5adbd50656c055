import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { adoptArtifact, artifactTempPath } from "../artifacts.js";
import { CsvSyntaxError, parseDelimited } from "./csv.js";
import { sniffDelimiter } from "./delimiter.js";
import type { Dtype } from "./dtypes.js";
import { scanCsv, withDuckDb } from "./duckdb-scan.js";
import { rejectBinary } from "./errors.js";
import { uniqueColumnNames } from "./names.js";

/** From this size on a clean CSV is stored as it is, with DuckDB counting and typing it. */
export const FAST_CSV_BYTES = 8 * 1024 * 1024;
/** Bytes read to check the header and the separator before taking the fast path. */
const HEAD_BYTES = 64 * 1024;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

export interface FastCsv {
  header: string[];
  rows: number;
  dtypes: Dtype[];
  sha256: string;
  uri: string;
}

/** The header of a clean comma-separated UTF-8 head, or null when the file needs the full reader. */
function cleanHeader(head: Buffer, file: string): string[] | null {
  try {
    rejectBinary(head, file);
  } catch {
    return null;
  }
  let text: string;
  try {
    // stream: a multi-byte character cut at the end of the head is not an error.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
  } catch {
    return null;
  }
  // The last line of the head may be cut short: judge the separator by the whole lines.
  const whole = text.slice(0, text.lastIndexOf("\n") + 1);
  const lines = whole.split("\n");
  if (lines.length < 3 || sniffDelimiter(whole, ",") !== ",") return null;
  let header: string[] | undefined;
  try {
    header = parseDelimited(lines[0] ?? "", ",")[0]?.fields;
  } catch (error) {
    if (error instanceof CsvSyntaxError) return null;
    throw error;
  }
  if (!header || header.length < 2) return null;
  if (header.some((name) => name !== name.trim() || name.includes('"'))) return null;
  return uniqueColumnNames(header).warnings.length === 0 ? header : null;
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Copies `file` (from byte `start`) into a temporary artifact, hashing it on the way. */
async function copyHashed(file: string, start: number): Promise<{ tmp: string; digest: string }> {
  const tmp = await artifactTempPath("csv");
  const hash = createHash("sha256");
  try {
    await pipeline(
      createReadStream(file, { start }),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(tmp),
    );
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  return { tmp, digest: hash.digest("hex") };
}

/**
 * Stores a large, clean CSV without parsing it in Node: UTF-8, comma-separated, a header of
 * distinct plain names and regular lines, checked strictly by DuckDB, which also counts the
 * rows and infers the dtypes pandas would. The stored bytes are the file's own (a UTF-8 BOM
 * dropped). Returns null when the file is not clean, for the full reader to handle (and
 * explain) it.
 */
export async function storeCleanCsv(file: string): Promise<FastCsv | null> {
  const head = await readHead(file);
  const bom = UTF8_BOM.every((byte, i) => head[i] === byte) ? UTF8_BOM.length : 0;
  const header = cleanHeader(head.subarray(bom), file);
  if (!header) return null;
  const { tmp, digest } = await copyHashed(file, bom);
  try {
    const scanned = await withDuckDb((connection) => scanCsv(connection, tmp));
    if (scanned.header.join("\0") !== header.join("\0")) throw new Error("header read otherwise");
    const stored = await adoptArtifact(tmp, digest, "csv");
    return { ...scanned, header, ...stored };
  } catch {
    await rm(tmp, { force: true });
    return null;
  }
}
