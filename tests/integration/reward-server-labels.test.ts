import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { artifactDir, putArtifact } from "../../storage/artifacts.js";
import { type RewardServer, startRewardServer } from "../../training/server/index.js";
import { useTempHome } from "../support/env.js";

/*
 * What a code reward's label may name: tables of the server's store by verified sha256, or
 * inline data. Paths are never opened, a wrong digest poisons nothing, and no file appears
 * anywhere a caller chose.
 */

const TOKEN = "labels-token-0123456789";
const home = useTempHome();
const outside = path.join(home, "..", `${path.basename(home)}-outside`);
let server: RewardServer;

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const block = (code: string) => `\`\`\`python\n${code}\n\`\`\``;
const SUM = "print(df['x'].sum())";

beforeAll(async () => {
  mkdirSync(outside, { recursive: true });
  server = await startRewardServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    preset: "release",
    concurrency: { plan: 4, code: 4, answer: 4 },
    bodyLimitBytes: 256 * 1024,
    inlineTableBytes: 1024,
    sandbox: await getSandbox("local"),
    prefixMismatch: "reject",
  });
});

afterAll(async () => {
  await server?.close();
  await closeSandboxes();
  rmSync(outside, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

interface Reply {
  rewards: number[];
  extra_logs: Record<string, number[]>;
  errors?: (string | null)[];
  error?: string;
}

/** Code samples: [reply code, label]; every label gets role code and the `SUM` reference. */
async function score(
  samples: [string, Record<string, unknown>][],
): Promise<{ status: number; body: Reply }> {
  const res = await fetch(`${server.url}/reward`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({
      query: samples.map(([code]) => block(code)),
      labels: samples.map(([, label]) =>
        JSON.stringify({ role: "code", reference: SUM, ...label }),
      ),
    }),
  });
  return { status: res.status, body: (await res.json()) as Reply };
}

/** A table as the exports write it: a whole TableRef. */
const ref = (sha256: string, uri: string) => ({
  id: "table:t",
  name: "t",
  uri,
  sha256,
  rows: 1,
  columns: [{ name: "x", dtype: "int64" }],
});

/** A file outside the store, its folders made as needed. */
function outsideFile(relative: string, content: string): string {
  const file = path.join(outside, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

describe("tables named by path", () => {
  it("never open the file: a 0600 file's content cannot move a reward", async () => {
    const secret = outsideFile("private/secret.csv", "x\nS3CRET\n");
    chmodSync(secret, 0o600);
    const named = ref(sha("x\nS3CRET\n"), secret);
    const stored = await putArtifact("x\n1\n2\n3\n", "csv");
    // The reference prints the secret's first character; two replies guess it.
    const guess = { reference: "print(str(df.iloc[0, 0])[0])", tables: [named] };
    const { status, body } = await score([
      ["print('S')", guess],
      ["print('Q')", guess],
      [SUM, { tables: [ref(stored.sha256, stored.uri)] }],
    ]);
    expect(status).toBe(200);
    // Both guesses refused alike: the right one gains nothing over the wrong one.
    expect(body.rewards[0]).toBe(body.rewards[1]);
    expect(body.rewards.slice(0, 2)).toEqual([0, 0]);
    for (const i of [0, 1]) {
      expect(body.errors?.[i]).toMatch(
        new RegExp(
          `^labels\\[${i}\\]\\.tables\\[0\\]\\.uri: .*is not a table of the reward server's store`,
        ),
      );
    }
    // The batch's other sample is scored as usual.
    expect(body.errors?.[2]).toBeNull();
    expect(body.extra_logs.code_output?.[2]).toBe(0.5);
  });

  it("leave no key file, pickle or folder where the label pointed", async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => `${i}`).join("\n");
    const content = `x\n${rows}\n`;
    const file = outsideFile("chosen/deep/t.csv", content);
    const label = { tables: [ref(sha(content), file)] };
    // Twice: a worker caches a table it was sent once its reply is out, before the next run.
    const replies = [await score([[SUM, label]]), await score([[SUM, label]])];
    expect(readdirSync(path.join(outside, "chosen"))).toEqual(["deep"]);
    expect(readdirSync(path.join(outside, "chosen", "deep"))).toEqual(["t.csv"]);
    expect(existsSync(path.join(outside, "keys"))).toBe(false);
    for (const { body } of replies) {
      expect(body.errors?.[0]).toMatch(/is not a table of the reward server's store/);
    }
  });
});

describe("tables named by sha256", () => {
  it("are read from the store whatever folder the uri names", async () => {
    const stored = await putArtifact("x\n4\n5\n", "csv");
    // Another file of the same name elsewhere: the store's own is the one run.
    const decoy = outsideFile(`decoy/${stored.sha256}.csv`, "x\n100\n");
    const { body } = await score([["print(9)", { tables: [ref(stored.sha256, decoy)] }]]);
    expect(body.errors).toBeUndefined();
    expect(body.extra_logs.code_output?.[0]).toBe(0.5);
  });

  it("refuse a digest the store lacks, per sample", async () => {
    const { status, body } = await score([
      ["print(1)", { tables: [{ name: "t", sha256: "f".repeat(64) }] }],
      ["print(1)", { tables: [] }],
    ]);
    expect(status).toBe(200);
    expect(body.errors?.[0]).toBe(
      `labels[0].tables[0]: no table with sha256 ${"f".repeat(64)} in the reward server's store`,
    );
    expect(body.errors?.[1]).toBeNull();
    expect(body.rewards[0]).toBe(0);
  });

  it("refuse a store file whose content is not its digest, until it is", async () => {
    const digest = sha("x\n5\n");
    const file = path.join(artifactDir(), `${digest}.csv`);
    writeFileSync(file, "x\n7\n");
    const label = { tables: [{ name: "t", sha256: digest }] };
    const refused = await score([["print(5)", label]]);
    expect(refused.body.errors?.[0]).toMatch(/does not hash to it; refused/);
    writeFileSync(file, "x\n5\n"); // a new version: verified afresh
    const mended = await score([["print(5)", label]]);
    expect(mended.body.errors).toBeUndefined();
    expect(mended.body.extra_logs.code_output?.[0]).toBe(0.5);
  });

  it("cannot be poisoned by a label pairing a stored digest with another file", async () => {
    const stored = await putArtifact("x\n1\n2\n3\n4\n", "csv");
    const poison = outsideFile("poison/evil.csv", "x\n1000\n");
    const poisoned = { tables: [ref(stored.sha256, poison)] };
    const first = await score([["print(10)", poisoned]]);
    // The correct label afterwards: the pseudo-gold run is the genuine table's (10).
    const correct = { tables: [ref(stored.sha256, stored.uri)] };
    const after = await score([["print(10)", correct]]);
    expect(after.body.extra_logs.code_output?.[0]).toBe(0.5);
    expect(after.body.rewards[0]).toBeGreaterThan(0.8);
    expect(after.body.errors).toBeUndefined();
    expect(first.body.errors?.[0]).toMatch(/is not a table of the reward server's store/);
  });

  it("are hashed once per version of the file", async () => {
    const stored = await putArtifact("x\n6\n6\n", "csv");
    const label = { tables: [{ name: "t", sha256: stored.sha256 }] };
    const before = server.tables.hashed;
    for (let k = 0; k < 3; k++) await score([["print(12)", label]]);
    expect(server.tables.hashed - before).toBe(1);
    writeFileSync(stored.uri, "x\n6\n6\n"); // same bytes, new version: hashed again, once
    for (let k = 0; k < 2; k++) await score([["print(12)", label]]);
    expect(server.tables.hashed - before).toBe(2);
  });

  it("refuse a link in the store, even to a file with the right content", async () => {
    const content = "x\n8\n";
    const target = outsideFile("linked/t.csv", content);
    symlinkSync(target, path.join(artifactDir(), `${sha(content)}.csv`));
    const { body } = await score([["print(8)", { tables: [{ name: "t", sha256: sha(content) }] }]]);
    expect(body.errors?.[0]).toMatch(/is a link or not a regular file; refused/);
  });
});

describe("inline tables", () => {
  it("are written into the store and scored, as CSV text or records", async () => {
    const { body } = await score([
      ["print(6)", { tables: [{ name: "t", csv: "x,y\n1,a\n2,b\n3,c\n" }] }],
      ["print(6)", { tables: [{ name: "t", records: [{ x: 1 }, { x: 2, y: "a,b" }, { x: 3 }] }] }],
    ]);
    expect(body.errors).toBeUndefined();
    expect(body.extra_logs.code_output).toEqual([0.5, 0.5]);
    expect(readdirSync(artifactDir())).toContain(`${sha("x,y\n1,a\n2,b\n3,c\n")}.csv`);
  });

  it("are refused over the size limit, or with a sha256 that is not theirs", async () => {
    const { body } = await score([
      ["print(1)", { tables: [{ name: "t", csv: `x\n${"1\n".repeat(600)}` }] }],
      ["print(1)", { tables: [{ name: "t", csv: "x\n1\n", sha256: "0".repeat(64) }] }],
    ]);
    expect(body.errors?.[0]).toMatch(/inline table of 1202 bytes, over the server's 1024/);
    expect(body.errors?.[1]).toMatch(/^labels\[1\]\.tables\[0\]\.sha256: 0{64} is not the sha256/);
  });

  it("take no uri (400: a malformed label)", async () => {
    const { status, body } = await score([
      ["print(1)", { tables: [{ name: "t", csv: "x\n1\n", uri: "/etc/passwd" }] }],
    ]);
    expect(status).toBe(400);
    expect(body.error).toBe("labels[0].tables.0.uri: an inline table takes no uri");
  });
});

describe("other roles", () => {
  it("ignore tables: an answer label's tables are never looked up", async () => {
    const res = await fetch(`${server.url}/reward/answer`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: ["Final Answer: 3"],
        labels: [JSON.stringify({ reference: "3", tables: [ref("a".repeat(64), "/etc/passwd")] })],
      }),
    });
    expect(await res.json()).toMatchObject({ rewards: [1] });
  });
});
