import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { S3Client } from "@aws-sdk/client-s3";
import { beforeEach, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { artifactStore, localFolderStore } from "../../storage/artifact-store.js";
import { parseStoreUrl, S3ArtifactStore } from "../../storage/artifact-store-s3.js";
import { artifactDir, localArtifact, putArtifact, sha256 } from "../../storage/artifacts.js";
import { verifyArtifact } from "../../tables/duckdb-csv.js";
import { loadTables } from "../../tables/load.js";
import { clearTableCache, readTable } from "../../tables/read.js";
import { assertStoredTable, storeUpload, uploadPath } from "../../tables/sources.js";
import { useTempHome } from "../support/env.js";

/* The local folder backend (the default) and the rules every backend shares. */

const CSV = "city,people\nLyon,522000\n";

function ref(uri: string, digest = sha256(CSV)): TableRef {
  return { id: "t", name: "cities", uri, sha256: digest, rows: 1, columns: [] };
}

/** A table stored under another TABLEMINDS_HOME (another machine's folder); this one is empty. */
async function storedElsewhere(): Promise<TableRef> {
  const other = useTempHome();
  const { uri } = await putArtifact(CSV, "csv");
  expect(uri.startsWith(other)).toBe(true);
  useTempHome();
  return ref(uri);
}

beforeEach(() => {
  delete process.env.TABLEMINDS_ARTIFACT_STORE;
  clearTableCache();
});

describe("the artifact store setting", () => {
  it("is the local folder alone when TABLEMINDS_ARTIFACT_STORE is unset or blank", async () => {
    expect(await artifactStore({})).toBe(localFolderStore);
    expect(await artifactStore({ TABLEMINDS_ARTIFACT_STORE: " " })).toBe(localFolderStore);
  });

  it("refuses a malformed one in one line", () => {
    expect(() => artifactStore({ TABLEMINDS_ARTIFACT_STORE: "/data/tables" })).toThrow(
      /^TABLEMINDS_ARTIFACT_STORE: expected s3:\/\/bucket\[\/prefix\]$/,
    );
  });

  it("names a bucket and a prefix, and keys by the folder's own names", async () => {
    expect(parseStoreUrl("s3://team-tables")).toEqual({ bucket: "team-tables", prefix: "" });
    expect(parseStoreUrl("s3://team-tables/prod/artifacts/")).toEqual({
      bucket: "team-tables",
      prefix: "prod/artifacts",
    });
    const store = await artifactStore({
      TABLEMINDS_ARTIFACT_STORE: "s3://team-tables/prod",
      AWS_ENDPOINT_URL: "http://127.0.0.1:9",
      AWS_REGION: "eu-west-3",
    });
    expect(store).toBeInstanceOf(S3ArtifactStore);
    expect(store.where(`uploads/${"a".repeat(64)}.csv`)).toBe(
      `s3://team-tables/prod/uploads/${"a".repeat(64)}.csv`,
    );
    const bare = new S3ArtifactStore(new S3Client({ region: "us-east-1" }), "b", "");
    expect(bare.key("x.csv")).toBe("x.csv");
  });
});

describe("the local folder", () => {
  it("opens a table of this folder where it is", async () => {
    useTempHome();
    const { uri } = await putArtifact(CSV, "csv");
    expect(await localArtifact(ref(uri))).toBe(uri);
    expect((await readTable(ref(uri))).rows).toEqual([["Lyon", "522000"]]);
  });

  it("opens a table named by another folder in this one, never in the other", async () => {
    const elsewhere = await storedElsewhere();
    expect(existsSync(elsewhere.uri)).toBe(true);
    const here = path.join(artifactDir(), path.basename(elsewhere.uri));
    expect(await localArtifact(elsewhere)).toBe(here);
    // The other folder's file is there, and still not read: this folder has no such table.
    await expect(readTable(elsewhere)).rejects.toThrow(
      /artifact missing or unreadable: no such file/,
    );
    await expect(verifyArtifact(elsewhere)).rejects.toThrow(/no such file/);
    await putArtifact(CSV, "csv");
    expect(await verifyArtifact(elsewhere)).toBe(here);
    expect((await readTable(elsewhere)).rows).toEqual([["Lyon", "522000"]]);
  });

  it("opens a file of no store where the process named it", async () => {
    useTempHome();
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-plain-"));
    const file = path.join(dir, "cities.csv");
    writeFileSync(file, CSV);
    expect(await localArtifact(ref(file))).toBe(file);
    expect((await readTable(ref(file))).rows).toHaveLength(1);
  });

  it("takes a ready-made table by its own sha256 name, from any folder, and nothing else", async () => {
    const elsewhere = await storedElsewhere();
    const digest = elsewhere.sha256;
    expect(() => assertStoredTable(elsewhere)).not.toThrow();
    expect(() =>
      assertStoredTable(ref(`/srv/other-home/artifacts/${digest}.parquet`)),
    ).not.toThrow();
    for (const uri of [
      `/srv/other-home/artifacts/${"b".repeat(64)}.csv`,
      `/srv/other-home/artifacts/${digest}.txt`,
      `/srv/other-home/artifacts/${digest}.csv.pkl`,
      `artifacts/${digest}.csv`,
      "/etc/passwd",
    ]) {
      expect(() => assertStoredTable(ref(uri)), uri).toThrow(/must be in the artifact store/);
    }
    // The text view a reading names is read as well: it follows the same rule.
    const text = { uri: "/etc/passwd", sha256: "c".repeat(64) };
    expect(() => assertStoredTable({ ...elsewhere, reading: { text } } as TableRef)).toThrow(
      /must be in the artifact store/,
    );
  });

  it("keeps uploads readable by their owner only, and says when one is not here", async () => {
    useTempHome();
    const { upload } = await storeUpload(Readable.from([Buffer.from(CSV)]), "cities.csv");
    expect(upload).toBe(`${sha256(CSV)}.csv`);
    expect(statSync(uploadPath(upload)).mode & 0o777).toBe(0o600);
    const [loaded] = await loadTables({ upload });
    expect(loaded?.table.rows).toBe(1);
    useTempHome();
    await expect(loadTables({ upload })).rejects.toThrow(/no such file/);
  });
});

describe("a shared store that cannot be reached", () => {
  it("fails the store call in one line, and nothing is put in the folder", async () => {
    useTempHome();
    const closed = await closedPort();
    Object.assign(process.env, {
      TABLEMINDS_ARTIFACT_STORE: "s3://team-tables/prod",
      AWS_ENDPOINT_URL: `http://127.0.0.1:${closed}`,
      AWS_ACCESS_KEY_ID: "k",
      AWS_SECRET_ACCESS_KEY: "s",
      AWS_REGION: "us-east-1",
    });
    try {
      const name = `${sha256(CSV)}.csv`;
      const put = putArtifact(CSV, "csv");
      await expect(put).rejects.toThrow(
        new RegExp(`^could not store s3://team-tables/prod/${name}: [^\\n]+$`),
      );
      expect(readdirSync(artifactDir())).toEqual([]);
      // A table missing here cannot be fetched either: the reader says why, in one line.
      await expect(readTable(ref(`/srv/other/artifacts/${name}`))).rejects.toThrow(
        new RegExp(`^cannot load table .*could not fetch s3://team-tables/prod/${name}: [^\\n]+$`),
      );
      expect(readdirSync(artifactDir())).toEqual([]);
    } finally {
      for (const key of ["TABLEMINDS_ARTIFACT_STORE", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID"]) {
        delete process.env[key];
      }
      delete process.env.AWS_SECRET_ACCESS_KEY;
      delete process.env.AWS_REGION;
    }
  }, 30_000);
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
