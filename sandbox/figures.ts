import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import {
  type Figure,
  type FigureFile,
  FigureSchema,
  LineageSchema,
} from "../blackboard/schemas.js";
import { cachedArtifact, putArtifact, sha256 } from "../storage/artifacts.js";

/**
 * A figure as the runner reports it (figures.py): its files are names in the run's scratch
 * directory, not yet in the artifact store.
 */
export const RunnerFigureSchema = FigureSchema.omit({ id: true, files: true }).extend({
  files: z.partialRecord(z.enum(["png", "svg"]), z.string()),
  derived: FigureSchema.shape.derived.default("unknown"),
  derivation: z.string().default("not traced"),
  lineage: z.array(LineageSchema).default([]),
});
export type RunnerFigure = z.infer<typeof RunnerFigureSchema>;

/** The largest figure file kept (interpreter.py refuses bigger ones first). */
export const MAX_FIGURE_FILE_BYTES = 16 * 1024 * 1024;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/*
 * The code runs in the process that saves its figures, so it could have made savefig write
 * anything. An SVG is served to browsers (GET /artifacts): one that could run script or
 * reach out (a script element, an event attribute, a reference that is not into the file
 * itself or an embedded PNG/JPEG) is refused. matplotlib writes none of these.
 */
const SVG_ACTIVE =
  /<\s*(?:script|foreignObject|iframe|embed|object)\b|\son[a-z]+\s*=|javascript:|@import/i;
const SVG_REFERENCE = /(?:xlink:)?href\s*=\s*["']([^"']*)["']|url\(\s*['"]?([^)'"]*)/gi;
const INNER_REFERENCE = /^(?:#|data:image\/(?:png|jpeg);base64,)/i;

/** Why bytes are not a safe figure of `format`; null when they are. */
export function figureFileProblem(format: "png" | "svg", bytes: Buffer): string | null {
  if (bytes.length > MAX_FIGURE_FILE_BYTES) {
    return `its file has ${bytes.length} bytes, more than the ${MAX_FIGURE_FILE_BYTES} allowed`;
  }
  if (format === "png") {
    return bytes.subarray(0, 8).equals(PNG_SIGNATURE) ? null : "its file is not a PNG image";
  }
  const text = bytes.toString("utf8");
  if (!/^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]/.test(text)) {
    return "its file is not an SVG image";
  }
  if (SVG_ACTIVE.test(text)) return "the SVG holds script or an active element";
  for (const match of text.matchAll(SVG_REFERENCE)) {
    const target = (match[1] ?? match[2] ?? "").trim();
    if (target && !INNER_REFERENCE.test(target)) {
      return `the SVG refers outside itself (${JSON.stringify(target.slice(0, 80))})`;
    }
  }
  return null;
}

/** Reads one file a run left in its scratch directory, by the plain name the runner gave it. */
export type ScratchFileReader = (fileName: string) => Promise<Uint8Array>;

function plainFileName(file: string): string | undefined {
  const name = path.posix.basename(file);
  return name === file && name !== "." && name !== ".." && !name.includes("\\") ? name : undefined;
}

/**
 * Moves the files of the figures a run drew into the artifact store (`<sha256>.png|svg`). A
 * file that cannot be read, is not the image it should be, or cannot be stored becomes a
 * note; the figure is kept with the files that could.
 */
export async function storeFigures(
  figures: RunnerFigure[],
  readFile: ScratchFileReader,
): Promise<{ figures: Figure[]; notes: string[] }> {
  const stored: Figure[] = [];
  const notes: string[] = [];
  for (const [index, figure] of figures.entries()) {
    const files: FigureFile[] = [];
    for (const format of ["png", "svg"] as const) {
      const file = figure.files[format];
      if (file === undefined) continue;
      const what = `note: figure ${figure.number} (${format})`;
      const name = plainFileName(file);
      if (!name) {
        notes.push(`${what} was refused: bad file name ${file}`);
        continue;
      }
      try {
        const bytes = Buffer.from(await readFile(name));
        const problem = figureFileProblem(format, bytes);
        if (problem) {
          notes.push(`${what} was refused: ${problem}`);
          continue;
        }
        const { sha256, uri } = await putArtifact(bytes, format);
        files.push({ format, uri, sha256, bytes: bytes.length });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        notes.push(`${what} could not be stored: ${reason}`);
      }
    }
    stored.push({ ...figure, id: `fig${index + 1}`, files });
  }
  return { figures: stored, notes };
}

/** The figures of a result; none when it drew none. */
export function figuresOf(result: { figures?: Figure[] } | null | undefined): Figure[] {
  return result?.figures ?? [];
}

const FIGURE_NAME = /^([0-9a-f]{64})\.(png|svg)$/;
const CONTENT_TYPES = { png: "image/png", svg: "image/svg+xml" } as const;

/**
 * A stored figure file by its name (`<sha256>.png|svg`), with the headers to serve it under:
 * checked again as `figureFileProblem` checks it, and served so that a browser runs nothing
 * in it. Null for any other name, a missing file, or bytes that do not match their name.
 */
export async function servedFigure(
  name: string,
): Promise<{ bytes: Buffer; headers: Record<string, string> } | null> {
  const match = FIGURE_NAME.exec(name);
  const format = match?.[2] as "png" | "svg" | undefined;
  if (!match || !format) return null;
  const file = await cachedArtifact(name);
  const bytes = await readFile(file).catch(() => null);
  if (!bytes || sha256(bytes) !== match[1] || figureFileProblem(format, bytes)) return null;
  return {
    bytes,
    headers: {
      "content-type": CONTENT_TYPES[format],
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
      "cache-control": "private, max-age=31536000, immutable",
    },
  };
}
