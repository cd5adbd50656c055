import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

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
