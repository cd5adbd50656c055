import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { TableRef } from "../../blackboard/schemas.js";
import { artifactDir, cachedArtifact, putArtifact, sha256 } from "../../storage/artifacts.js";
import { BoundedCache } from "../../storage/bounded-cache.js";
import type { InlineTable, LabelTable, StoredTable } from "./label.js";

/*
 * The tables a label may name: files of the server's own artifact store, by the sha256 of
 * their bytes (verified against the content, once per file version), or inline data the
 * server writes into that store itself. No path a caller sends is ever opened, so a label
 * cannot make the sandbox read a file outside the store, nor make its worker write beside one
 * (the pickle cache and its key go next to the table: inside the store, and
 * `$TABLEMINDS_HOME/keys`). Every table handed on is the store's file of its verified digest,
 * so what the sandbox and the reward caches keep per digest is that digest's content.
 */

/** Largest inline table (CSV text, or records once written as CSV), in bytes. */
export const DEFAULT_INLINE_TABLE_BYTES = 256 * 1024;

/** A table a label names that the server will not use: that sample is refused, not scored. */
export class TableRefused extends Error {}

const STORE_EXTENSIONS = ["csv", "parquet"] as const;

/**
 * What identifies one version of a file: a write changes its size or modification time, a
 * replacement its inode. Not the change time: the sandbox hard-links tables into each run,
 * which changes it every time.
 */
const stampOf = (info: { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint }) =>
  `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;

/** A store file's state: its bytes hash to its name, they do not, no such file, or not a plain file. */
type Verdict = "verified" | "mismatch" | "absent" | "unusable";

export interface TableStoreOptions {
  /** Largest inline table, in bytes. */
  inlineTableBytes?: number;
}

/** The reward server's view of the artifact store: only verified tables go to the sandbox. */
export class TableStore {
  readonly dir: string;
  readonly inlineTableBytes: number;
  /** Per store file: the version last hashed and whether it matched its name. */
  private readonly verdicts = new BoundedCache<{ stamp: string; matches: boolean }>(4096);
  /** Files being hashed now, so concurrent requests for one table hash it once. */
  private readonly hashing = new Map<string, Promise<Verdict>>();
  /** Files hashed so far: a version verified once is not hashed again (for tests). */
  hashed = 0;

  /** The store of `$TABLEMINDS_HOME` as it is now, where putArtifact writes inline tables. */
  constructor(options: TableStoreOptions = {}) {
    this.dir = path.resolve(artifactDir());
    this.inlineTableBytes = options.inlineTableBytes ?? DEFAULT_INLINE_TABLE_BYTES;
  }

  /**
   * The label's tables as TableRefs whose uri is the store's verified file. Throws TableRefused
   * (its message starting with `where`) for a table that is not usable.
   */
  async resolve(tables: LabelTable[], where: string): Promise<TableRef[]> {
    const resolved: TableRef[] = [];
    for (const [j, table] of tables.entries()) {
      const at = `${where}.tables[${j}]`;
      resolved.push(
        table.kind === "stored" ? await this.stored(table, at) : await this.inline(table, at),
      );
    }
    return resolved;
  }

  private async stored(table: StoredTable, at: string): Promise<TableRef> {
    let extensions: readonly string[] = STORE_EXTENSIONS;
    if (table.uri !== undefined) {
      const extension = STORE_EXTENSIONS.find(
        (ext) => path.basename(table.uri ?? "") === `${table.sha256}.${ext}`,
      );
      if (!extension) {
        throw new TableRefused(
          `${at}.uri: ${JSON.stringify(table.uri)} is not a table of the reward server's store ` +
            "(name a stored table by its sha256, or send the table inline as csv or records)",
        );
      }
      extensions = [extension];
    }
    for (const extension of extensions) {
      const file = path.join(this.dir, `${table.sha256}.${extension}`);
      await this.fetchShared(file, at);
      const verdict = await this.verifyAt(file, table.sha256, at);
      if (verdict === "absent") continue;
      if (verdict !== "verified") throw untrusted(at, table.sha256, verdict);
      return {
        id: table.id ?? `table:${table.name}`,
        name: table.name,
        uri: file,
        sha256: table.sha256,
        rows: table.rows ?? 0,
        columns: table.columns ?? [],
      };
    }
    throw new TableRefused(
      `${at}: no table with sha256 ${table.sha256} in the reward server's store`,
    );
  }

  private async inline(table: InlineTable, at: string): Promise<TableRef> {
    const text = table.kind === "csv" ? table.csv : csvOfRecords(table.records);
    const bytes = Buffer.from(text, "utf8");
    if (bytes.length > this.inlineTableBytes) {
      throw new TableRefused(
        `${at}: inline table of ${bytes.length} bytes, over the server's ${this.inlineTableBytes}`,
      );
    }
    const digest = sha256(bytes);
    if (table.kind === "csv" && table.sha256 !== undefined && table.sha256 !== digest) {
      throw new TableRefused(
        `${at}.sha256: ${table.sha256} is not the sha256 of its csv (${digest})`,
      );
    }
    const { uri } = await putArtifact(bytes, "csv");
    const file = path.join(this.dir, `${digest}.csv`);
    // putArtifact writes under TABLEMINDS_HOME as it is now; the store must not have moved.
    if (path.resolve(uri) !== file) {
      throw new Error(`inline table stored at ${uri}, not in ${this.dir}`);
    }
    const verdict = await this.verifyAt(file, digest, at);
    if (verdict !== "verified") throw untrusted(at, digest, verdict);
    const columns = table.kind === "records" ? columnsOf(table.records) : [];
    return {
      id: table.id ?? `table:${table.name}`,
      name: table.name,
      uri: file,
      sha256: digest,
      rows: table.kind === "records" ? table.records.length : 0,
      columns: columns.map((name) => ({ name, dtype: "object" })),
    };
  }

  /**
   * With a shared artifact store, a table another machine stored is fetched into this store's
   * folder (checked against its sha256 on the way) before it is verified here as any other.
   */
  private async fetchShared(file: string, at: string): Promise<void> {
    if (path.dirname(file) !== path.resolve(artifactDir())) return;
    try {
      await cachedArtifact(path.basename(file));
    } catch (error) {
      throw new TableRefused(`${at}: ${(error as Error).message}`);
    }
  }

  /** verify, with a file the server cannot read refusing the sample rather than the batch. */
  private async verifyAt(file: string, digest: string, at: string): Promise<Verdict> {
    try {
      return await this.verify(file, digest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new TableRefused(
        `${at}: the store's file for sha256 ${digest} cannot be read (${code})`,
      );
    }
  }

  /**
   * Whether `file` (a regular file, not a link) holds bytes whose sha256 is `digest`. Hashed
   * once per version of the file (device, inode, size, modification time); a version that
   * changes while it is hashed is not trusted.
   */
  async verify(file: string, digest: string): Promise<Verdict> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return "absent";
      if (code === "ELOOP") return "unusable"; // a link in the store is never followed
      throw error;
    }
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile()) return "unusable";
      const stamp = stampOf(info);
      const known = this.verdicts.get(file);
      if (known?.stamp === stamp) return known.matches ? "verified" : "mismatch";
      const key = `${file}\0${stamp}`;
      let pending = this.hashing.get(key);
      if (!pending) {
        pending = this.hash(handle, file, stamp, digest).finally(() => this.hashing.delete(key));
        this.hashing.set(key, pending);
      }
      return await pending;
    } finally {
      await handle.close();
    }
  }

  private async hash(
    handle: Awaited<ReturnType<typeof open>>,
    file: string,
    stamp: string,
    digest: string,
  ): Promise<Verdict> {
    this.hashed++;
    const hash = createHash("sha256");
    for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
      hash.update(chunk as Buffer);
    }
    const after = stampOf(await handle.stat({ bigint: true }));
    if (after !== stamp) return "mismatch"; // written meanwhile: neither version is vouched for
    const matches = hash.digest("hex") === digest;
    this.verdicts.set(file, { stamp, matches });
    return matches ? "verified" : "mismatch";
  }
}

const UNTRUSTED = {
  mismatch: "does not hash to it",
  absent: "is missing",
  unusable: "is a link or not a regular file",
} as const;

/** The refusal of a store file that is not verified. */
function untrusted(at: string, digest: string, verdict: keyof typeof UNTRUSTED): TableRefused {
  return new TableRefused(
    `${at}: the store's file for sha256 ${digest} ${UNTRUSTED[verdict]}; refused`,
  );
}

/** The columns of records, in the order they first appear. */
function columnsOf(records: Record<string, unknown>[]): string[] {
  const columns = new Set<string>();
  for (const record of records) for (const key of Object.keys(record)) columns.add(key);
  return [...columns];
}

/** One CSV field: quoted when it holds a separator, a quote, a line break or edge spaces. */
function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Records as CSV: a header of every column, then one line per record (missing cells empty). */
export function csvOfRecords(records: Record<string, string | number | boolean | null>[]): string {
  const columns = columnsOf(records);
  const lines = [columns.map(csvField).join(",")];
  for (const record of records) lines.push(columns.map((c) => csvField(record[c])).join(","));
  return `${lines.join("\n")}\n`;
}
