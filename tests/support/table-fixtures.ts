import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TableRef } from "../../blackboard/schemas.js";
import { putArtifact } from "../../storage/artifacts.js";

/** A fresh directory for fixture files, under the system temp directory. */
export function fixtureDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), "tableminds-tables-"));
}

/** Writes `content` to `dir/name` and returns the full path. */
export function writeFixture(dir: string, name: string, content: string | Uint8Array): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** A small medals table the sandbox tests share. */
export const MEDALS_CSV = [
  "nation,gold,silver",
  "United States,39,41",
  "China,38,32",
  "Japan,27,14",
  "Great Britain,22,21",
].join("\n");

/** Stores `csv` as an artifact and returns its TableRef. */
export async function tableRef(name: string, csv: string, columns: TableRef["columns"]) {
  const { sha256, uri } = await putArtifact(`${csv}\n`, "csv");
  const rows = csv.split("\n").length - 1;
  return { id: `table:${name}`, name, uri, sha256, rows, columns } satisfies TableRef;
}

/** MEDALS_CSV stored as the table `medals`. */
export function medalsRef(): Promise<TableRef> {
  return tableRef("medals", MEDALS_CSV, [
    { name: "nation", dtype: "object" },
    { name: "gold", dtype: "int64" },
    { name: "silver", dtype: "int64" },
  ]);
}
