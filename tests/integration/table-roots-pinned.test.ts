import { mkdirSync, readdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { enterServedMode, operatorSettings, setOperatorSettings } from "../../settings/operator.js";
import { artifactDir } from "../../storage/artifacts.js";
import { loadTables } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import { allowedSource } from "../../tables/sources.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir } from "../support/table-fixtures.js";

/*
 * On a server, a path under the table roots is checked where it is opened: a symbolic link
 * swapped between the check and the read (or between two reads) reads nothing outside the roots.
 */

let root: string;
let outside: string;

beforeAll(() => {
  useTempHome();
  const dir = fixtureDir();
  root = path.join(dir, "root");
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, "allowed.csv"), "city,pop\nOslo,709\n");
  outside = path.join(dir, "secret.csv");
  writeFileSync(outside, "secret,value\nzqx-outside-4411,1\n");
  enterServedMode();
  setOperatorSettings({ tableRoots: [root] });
});

describe("table roots on a server", () => {
  it("reads what the opened descriptor is, not what the path named at the check", async () => {
    const link = path.join(root, "swapped.csv");
    symlinkSync(path.join(root, "allowed.csv"), link);
    // The input policy passes the link while it points inside...
    const source = allowedSource({ path: link }, operatorSettings());
    // ...and it is swapped to a file outside before the loader opens it.
    unlinkSync(link);
    symlinkSync(outside, link);
    await expect(loadTables(source)).rejects.toThrow(/outside the table roots/);
    // Swapped back, it reads the allowed file, from a private copy that is gone afterwards.
    unlinkSync(link);
    symlinkSync(path.join(root, "allowed.csv"), link);
    const [loaded] = await loadTables(source);
    expect((await readTable(loaded?.table ?? ({} as never))).rows).toEqual([["Oslo", "709"]]);
    expect(loaded?.table.origin).toMatchObject({ file: "swapped.csv" });
    const pinned = path.join(artifactDir(), "pinned");
    expect(readdirSync(pinned)).toEqual([]);
  });
});
