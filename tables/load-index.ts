import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { TableRefSchema } from "../blackboard/schemas.js";
import {
  artifactDir,
  sha256,
  shareArtifact,
  tempPathFor,
  touchArtifact,
} from "../storage/artifacts.js";

/**
 * What loading a source gave, kept on disk beside the artifacts so that another process
 * reuses it instead of reading the file again: `artifacts/index/<key>.json`, where the key
 * hashes the source's identity (path, size and mtime; or its content) and the load options.
 * Bump LOADER_VERSION when loading a file would give other tables than before.
 */
const LOADER_VERSION = 4;

const EntrySchema = z.object({
  version: z.literal(LOADER_VERSION),
  tables: z.array(z.object({ table: TableRefSchema, warnings: z.array(z.string()) })),
});
export type IndexEntry = z.infer<typeof EntrySchema>;

function indexDir(): string {
  return path.join(artifactDir(), "index");
}

/** The index key of a source identity (any JSON-able parts), for this loader version. */
export function indexKey(parts: readonly unknown[]): string {
  return sha256(JSON.stringify([LOADER_VERSION, ...parts]));
}

/** The entry in `file` when it is one of this loader's, else null. */
async function readEntry(file: string): Promise<IndexEntry | null> {
  try {
    const parsed = EntrySchema.safeParse(JSON.parse(await readFile(file, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Whether every table of the entry is still in the store (and not among `gone`). */
async function allStored(
  entry: IndexEntry,
  gone: ReadonlySet<string> = new Set(),
): Promise<boolean> {
  const dir = artifactDir();
  for (const { table } of entry.tables) {
    if (path.dirname(table.uri) !== dir || gone.has(table.uri)) return false;
    try {
      await stat(table.uri);
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * The entry for `key` when it exists and all its artifacts are still in the store (each is
 * then marked as used); null otherwise, also for an unreadable or foreign entry.
 */
export async function readIndex(key: string): Promise<IndexEntry | null> {
  const file = path.join(indexDir(), `${key}.json`);
  const entry = await readEntry(file);
  if (!entry || !(await allStored(entry))) return null;
  await Promise.all([file, ...entry.tables.map((t) => t.table.uri)].map(touchArtifact));
  await Promise.all(entry.tables.map((t) => shareArtifact(t.table.uri)));
  return entry;
}

/**
 * Whether the index entry in `file` can never be used again (for `prune`): it is unreadable,
 * written by another loader version, or names a table that is gone (or among `gone`, the
 * tables being removed).
 */
export async function unusedIndexEntry(file: string, gone?: ReadonlySet<string>): Promise<boolean> {
  const entry = await readEntry(file);
  return !entry || !(await allStored(entry, gone));
}

/** Records `tables` under each of `keys`; written whole and renamed, so readers never see half. */
export async function writeIndex(
  keys: readonly string[],
  tables: IndexEntry["tables"],
): Promise<void> {
  const dir = indexDir();
  await mkdir(dir, { recursive: true });
  const text = JSON.stringify({ version: LOADER_VERSION, tables } satisfies IndexEntry);
  for (const key of keys) {
    const tmp = tempPathFor(path.join(dir, `${key}.json`));
    await writeFile(tmp, text);
    await rename(tmp, path.join(dir, `${key}.json`));
  }
}
