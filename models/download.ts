import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import cliProgress from "cli-progress";
import { z } from "zod";

export const DownloadRequestSchema = z.object({
  url: z.url({ protocol: /^https?$/ }),
  /** The finished file; bytes arrive in `<dest>.part` until the download is whole. */
  dest: z.string().min(1),
  /** Checked when the download is whole; a mismatch deletes the file. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /** The size the file must have: a server announcing another is refused before any byte is kept. */
  bytes: z.number().int().positive().optional(),
  /** A progress bar on stderr (only drawn on a terminal). */
  progress: z.boolean().default(true),
  /** Gives up when no byte arrives for this long. */
  stallMs: z.number().int().positive().default(30_000),
});
export type DownloadRequest = z.input<typeof DownloadRequestSchema>;

export interface DownloadResult {
  file: string;
  bytes: number;
  /** Bytes a previous, broken download had left, that this one kept. */
  resumedFrom: number;
}

export class DownloadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DownloadError";
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

/** The total size a 206 reply announces (`bytes 100-199/200`), and where its bytes start. */
function contentRange(header: string | null): { start: number; total?: number } | undefined {
  const match = header?.match(/^bytes (\d+)-\d+\/(\d+|\*)$/);
  if (!match) return undefined;
  return { start: Number(match[1]), ...(match[2] === "*" ? {} : { total: Number(match[2]) }) };
}

/**
 * Downloads `url` to `dest` once: a file already at `dest` is kept, and a broken download
 * resumes from the bytes of `<dest>.part` with an HTTP Range request (a server that ignores the
 * range sends the whole file again). Fails with a one-line DownloadError.
 */
export async function downloadFile(request: DownloadRequest): Promise<DownloadResult> {
  const { url, dest, sha256, bytes, progress, stallMs } = DownloadRequestSchema.parse(request);
  const existing = await sizeOf(dest);
  if (existing > 0) return { file: dest, bytes: existing, resumedFrom: existing };
  await mkdir(path.dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  const have = await sizeOf(part);

  const stall = new AbortController();
  let timer = setTimeout(() => stall.abort(), stallMs);
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), stallMs);
  };
  let response: Response;
  try {
    response = await fetch(url, {
      headers: have > 0 ? { Range: `bytes=${have}-` } : {},
      signal: stall.signal,
    });
  } catch (error) {
    clearTimeout(timer);
    throw new DownloadError(`cannot download ${url}: ${causeOf(error)}`, { cause: error });
  }

  let start = 0;
  let total: number | undefined;
  if (response.status === 206) {
    const range = contentRange(response.headers.get("content-range"));
    if (range?.start !== have) {
      clearTimeout(timer);
      throw new DownloadError(`cannot download ${url}: the server resumed at the wrong byte`);
    }
    start = have;
    total = range.total;
  } else if (response.status === 416 && have > 0) {
    // The part file already holds every byte.
    clearTimeout(timer);
    return finish(part, dest, sha256, have, have);
  } else if (response.ok) {
    const length = Number(response.headers.get("content-length"));
    total = Number.isFinite(length) && length > 0 ? length : undefined;
  } else {
    clearTimeout(timer);
    throw new DownloadError(`cannot download ${url}: HTTP ${response.status}`);
  }
  if (!response.body) {
    clearTimeout(timer);
    throw new DownloadError(`cannot download ${url}: the reply has no body`);
  }
  if (bytes !== undefined && total !== undefined && total !== bytes) {
    clearTimeout(timer);
    await response.body.cancel();
    throw new DownloadError(
      `cannot download ${url}: the server offers ${total} bytes, expected ${bytes}; nothing was kept`,
    );
  }

  const bar =
    progress && process.stderr.isTTY
      ? new cliProgress.SingleBar(
          {
            stream: process.stderr,
            format: `${path.basename(dest)} [{bar}] {percentage}% {value}/{total} MB`,
            formatValue: (v, _o, type) =>
              type === "value" || type === "total" ? (v / 1e6).toFixed(1) : String(v),
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  bar?.start(total ?? 0, start);
  let received = start;
  // Each chunk is on disk before the next is read, so a broken download keeps every byte it got.
  const file = await open(part, start > 0 ? "a" : "w");
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      alive();
      await file.write(chunk);
      received += chunk.length;
      bar?.update(received);
    }
  } catch (error) {
    throw new DownloadError(
      `download of ${url} broke after ${received} bytes (${causeOf(error)}); run it again to resume`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    bar?.stop();
    await file.close();
  }
  if (total !== undefined && received !== total) {
    throw new DownloadError(
      `download of ${url} stopped at ${received} of ${total} bytes; run it again to resume`,
    );
  }
  return finish(part, dest, sha256, received, start);
}

async function finish(
  part: string,
  dest: string,
  sha256: string | undefined,
  bytes: number,
  resumedFrom: number,
): Promise<DownloadResult> {
  if (sha256 !== undefined) {
    const actual = await sha256Of(part);
    if (actual !== sha256) {
      await rm(part, { force: true });
      throw new DownloadError(
        `downloaded ${path.basename(dest)} has sha256 ${actual}, expected ${sha256}; it was deleted`,
      );
    }
  }
  await rename(part, dest);
  return { file: dest, bytes, resumedFrom };
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "AbortError") return "no data arrived in time";
  const inner = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${inner}`;
}
