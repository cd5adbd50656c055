import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { DuckDbSql } from "../../sandbox/duckdb.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { artifactStore } from "../../storage/artifact-store.js";
import { parseStoreUrl, S3ArtifactStore } from "../../storage/artifact-store-s3.js";
import {
  artifactDir,
  hashFile,
  localArtifact,
  putArtifact,
  sha256,
} from "../../storage/artifacts.js";
import { loadTable, loadTables } from "../../tables/load.js";
import { clearTableCache, readTable } from "../../tables/read.js";
import { assertStoredTable, storeUpload } from "../../tables/sources.js";
import { EXAMPLES, useStubEndpoint, withContext } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The artifact store in a real S3-compatible server (SeaweedFS on loopback): two machines are
 * two TABLEMINDS_HOMEs of this process sharing one bucket. What one stores, the other fetches
 * by hash into its own, empty folder; nothing is ever read from the other's folder (it is
 * deleted before the second one runs).
 */

let s3: Service;
let client: S3Client;
let bucket: string;
let prefix: string;

/** Folders this file makes, removed when it ends. */
const scratches: string[] = [];

function scratch(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  scratches.push(dir);
  return dir;
}

/** A fresh TABLEMINDS_HOME, made the current one: a machine with an empty cache. */
function newMachine(): string {
  const home = scratch("tableminds-s3-home-");
  process.env.TABLEMINDS_HOME = home;
  clearTableCache();
  return home;
}

async function keys(): Promise<string[]> {
  const listed = await client.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }),
  );
  return (listed.Contents ?? []).map((o) => o.Key ?? "").sort();
}

async function objectText(key: string): Promise<string> {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await got.Body?.transformToString()) ?? "";
}

beforeAll(async () => {
  s3 = startService("s3");
  Object.assign(process.env, s3.env);
  ({ bucket, prefix } = parseStoreUrl(s3.env.TABLEMINDS_ARTIFACT_STORE ?? ""));
  // The store's client first: it keeps the SDK's notice about Node 22 out of the output.
  await artifactStore();
  client = new S3Client({
    endpoint: s3.env.AWS_ENDPOINT_URL,
    forcePathStyle: true,
    region: s3.env.AWS_REGION,
  });
}, 90_000);

afterAll(async () => {
  await closeSandboxes();
  client?.destroy();
  s3?.stop();
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

describe("the S3 artifact store", () => {
  it("is the store TABLEMINDS_ARTIFACT_STORE names", async () => {
    const store = await artifactStore();
    expect(store).toBeInstanceOf(S3ArtifactStore);
    expect(store.where("x.csv")).toBe(`s3://${bucket}/${prefix}/x.csv`);
  });

  it("gives another machine the same bytes, by hash, fetched into its empty cache", async () => {
    const first = newMachine();
    const bytes = "city,people\nLyon,522000\nNantes,320000\n";
    const stored = await putArtifact(bytes, "csv");
    expect(await keys()).toContain(`${prefix}/${stored.sha256}.csv`);

    const second = newMachine();
    rmSync(first, { recursive: true, force: true });
    expect(existsSync(path.join(artifactDir(), `${stored.sha256}.csv`))).toBe(false);
    const file = await localArtifact(stored);
    expect(file).toBe(path.join(second, "artifacts", `${stored.sha256}.csv`));
    expect(await readFile(file, "utf8")).toBe(bytes);
    expect(await hashFile(file)).toBe(stored.sha256);
  });

  it("stores the same content once, written twice, at once, and never replaces an object", async () => {
    newMachine();
    const bytes = `id\n${randomBytes(8).toString("hex")}\n`;
    const name = `${sha256(bytes)}.csv`;
    const key = `${prefix}/${name}`;
    // Three machines that know nothing of each other put it at the same moment.
    const file = path.join(scratch("tableminds-s3-"), "t.csv");
    writeFileSync(file, bytes);
    const machines = [0, 1, 2].map(() => S3ArtifactStore.fromUrl(`s3://${bucket}/${prefix}`));
    await Promise.all(machines.map((store) => store.put(file, name)));
    // And this one twice at once, then again.
    const again = await Promise.all([putArtifact(bytes, "csv"), putArtifact(bytes, "csv")]);
    expect(again[0].uri).toBe(again[1].uri);
    await putArtifact(bytes, "csv");
    expect((await keys()).filter((k) => k === key)).toHaveLength(1);
    expect(await objectText(key)).toBe(bytes);

    // If-None-Match: *: a writer of other bytes under that name succeeds without replacing it
    // (the server answers 412, which means "it is there").
    writeFileSync(file, "other bytes\n");
    await S3ArtifactStore.fromUrl(`s3://${bucket}/${prefix}`).put(file, name);
    expect(await objectText(key)).toBe(bytes);
    const overwrite = client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x", IfNoneMatch: "*" }),
    );
    await expect(overwrite).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
  });

  it("sends a big file in parts, with If-None-Match honoured on completing them", async () => {
    const dir = scratch("tableminds-s3-big-");
    const file = path.join(dir, "big.csv");
    writeFileSync(file, randomBytes(12 * 1024 * 1024));
    const digest = await hashFile(file);
    const name = `${digest}.csv`;
    const parts = new S3ArtifactStore(client, bucket, prefix, 5 * 1024 * 1024);
    await parts.put(file, name);
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: parts.key(name) }));
    // A multipart object's ETag ends with its number of parts: 5 + 5 + 2 MB.
    expect(head.ETag).toMatch(/-3"$/);
    expect(head.ContentLength).toBe(12 * 1024 * 1024);
    // Completing a second multipart upload of the name is refused by the server (412): kept.
    writeFileSync(file, randomBytes(11 * 1024 * 1024));
    await new S3ArtifactStore(client, bucket, prefix, 5 * 1024 * 1024).put(file, name);
    const after = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: parts.key(name) }),
    );
    expect(after.ETag).toBe(head.ETag);

    newMachine();
    const fetched = await localArtifact({ uri: `/elsewhere/artifacts/${name}`, sha256: digest });
    expect(await hashFile(fetched)).toBe(digest);
  });

  it("puts a table over the default part size in parts through putArtifact", async () => {
    newMachine();
    const big = Buffer.concat([Buffer.from("n\n"), Buffer.alloc(9 * 1024 * 1024, "7\n")]);
    const stored = await putArtifact(big, "csv");
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}/${stored.sha256}.csv` }),
    );
    expect(head.ETag).toMatch(/-2"$/);
  });

  it("refuses an object changed in the bucket, naming it, and leaves nothing in the cache", async () => {
    newMachine();
    const stored = await putArtifact("name,score\nada,9\n", "csv");
    const key = `${prefix}/${stored.sha256}.csv`;
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: "name,score\nada,10\n" }),
    );
    newMachine();
    const fetch = localArtifact(stored);
    await expect(fetch).rejects.toThrow(
      `s3://${bucket}/${key}: its bytes do not match the sha256 it is named by`,
    );
    // Asked again, it is fetched and refused again: nothing was kept the first time.
    await expect(localArtifact(stored)).rejects.toThrow(/do not match/);
    expect(readdirSync(artifactDir())).toEqual([]);
    // A reader says so in one line.
    const ref = { ...stored, id: "t", name: "scores", rows: 1, columns: [] };
    await expect(readTable(ref)).rejects.toThrow(
      /^cannot load table .*do not match the sha256[^\n]*$/,
    );
    expect(readdirSync(artifactDir())).toEqual([]);
  });
});

describe("a table loaded on one machine, used on another", () => {
  let stub: StubServer;
  let medals: TableRef;

  beforeAll(async () => {
    const first = newMachine();
    medals = (await loadTable({ path: path.join(EXAMPLES, "olympics_2020_medals.csv") })).table;
    expect(medals.uri.startsWith(first)).toBe(true);
    newMachine();
    rmSync(first, { recursive: true, force: true });
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
  }, 60_000);

  afterAll(async () => {
    await stub?.close();
  });

  it("is accepted at the door by its sha256 name, though its uri names the other folder", () => {
    expect(() => assertStoredTable(medals)).not.toThrow();
    const renamed = { ...medals, uri: path.join(path.dirname(medals.uri), "other.csv") };
    expect(() => assertStoredTable(renamed)).toThrow(/artifact store/);
  });

  it("runs table_qa on it: the sandbox reads the rows fetched from the store", async () => {
    const state = (await graph.invoke(
      { question: MEDALS_QUESTION, tables: [medals] },
      withContext({ maxCodeAttempts: 1 }),
    )) as TableQAStateValue;
    expect(state.attempts[0]?.result?.ok).toBe(true);
    expect(state.attempts[0]?.result?.stdout).toContain("nations: 10");
    expect(state.answer?.final).toBe("203");
    expect(existsSync(path.join(artifactDir(), `${medals.sha256}.csv`))).toBe(true);
  }, 120_000);

  it("queries it with DuckDB on a third machine", async () => {
    newMachine();
    const sql = await DuckDbSql.open([medals], { threads: 1 });
    try {
      const result = await sql.query(`SELECT sum(gold) AS total FROM ${medals.name}`);
      expect(result.rows).toEqual([[203]]);
    } finally {
      await sql.close();
    }
  });

  it("runs the local sandbox on it on a fourth machine", async () => {
    newMachine();
    const sandbox = await LocalSandbox.start({ interpreters: 1 });
    try {
      const result = await sandbox.execute({
        code: "print(len(df), df['gold'].max())",
        tables: [medals],
      });
      expect(result.error).toBeNull();
      expect(result.stdout.trim()).toBe("10 39");
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it("loads an upload stored on one machine on another", async () => {
    const first = newMachine();
    const csv = "product,units\nlamp,3\ndesk,5\nchair,11\n";
    const { upload } = await storeUpload(Readable.from([Buffer.from(csv)]), "sales.csv");
    expect(await keys()).toContain(`${prefix}/uploads/${upload}`);
    newMachine();
    rmSync(first, { recursive: true, force: true });
    const [loaded] = await loadTables({ upload });
    expect(loaded?.table.rows).toBe(3);
    const data = await readTable(loaded?.table as TableRef);
    expect(data.rows).toEqual([
      ["lamp", "3"],
      ["desk", "5"],
      ["chair", "11"],
    ]);
  });

  it("keeps what is derived on each machine: only tables and uploads are in the store", async () => {
    const names = (await keys()).map((key) => key.slice(prefix.length + 1));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^(uploads\/)?[0-9a-f]{64}\.[a-z]+$/);
  });
});
