import { readFile } from "node:fs/promises";
import { Sandbox as CloudSandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { E2BSandbox, killCreatedE2BSandboxes } from "../../sandbox/e2b.js";
import { putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";

/**
 * Against the real E2B (or a self-hosted one with E2B_DOMAIN): needs E2B_API_KEY; uses the
 * default template (E2B's code interpreter) unless E2B_TEMPLATE names another. Skipped
 * without a key. Costs a few sandbox-minutes.
 */
describe.skipIf(!process.env.E2B_API_KEY)("the E2B sandbox on real E2B", () => {
  let sandbox: E2BSandbox;
  let medals: TableRef;
  const connection = () => ({ apiKey: process.env.E2B_API_KEY, domain: process.env.E2B_DOMAIN });

  beforeAll(async () => {
    useTempHome();
    const csv = "nation,gold\nUnited States,39\nChina,38\nJapan,27\n";
    const { sha256, uri } = await putArtifact(csv, "csv");
    medals = {
      id: "table:medals",
      name: "medals",
      uri,
      sha256,
      rows: 3,
      columns: [
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    };
    // 1: no template given: the default must have pandas.
    sandbox = await E2BSandbox.start({ poolSize: 1 });
  }, 240_000);

  afterAll(async () => {
    await sandbox?.close();
    await killCreatedE2BSandboxes();
  }, 60_000);

  it("runs a pandas snippet on the default template and brings back its output and table", async () => {
    const result = await sandbox.execute({
      code: "top = df[df['gold'] > 30].reset_index(drop=True)\nprint(int(top['gold'].sum()))",
      tables: [medals],
      timeoutMs: 30_000,
    });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("77\n");
    const top = result.tables.find((t) => t.variable === "top");
    expect(top?.table.rows).toBe(2);
    expect(await readFile(top?.table.uri ?? "", "utf8")).toBe(
      "nation,gold\nUnited States,39\nChina,38\n",
    );
  }, 120_000);

  it("2: tells a blocked network from an open one, and hardens the code", async () => {
    const { info, details } = await sandbox.describe();
    expect(info.backend).toBe("e2b");
    expect(details.template).toMatch(/code-interpreter-v1|from E2B_TEMPLATE/);
    expect(["blocked", "undetermined"]).toContain(details.network);
    expect(info.protections.noInternet).toBe(details.network === "blocked");
    const socket = await sandbox.execute({
      code: "import socket\nsocket.create_connection(('1.1.1.1', 80), 2)",
      tables: [],
    });
    expect(socket.error?.type).toBe("PermissionError");
    const open = await E2BSandbox.start({ poolSize: 1, allowInternet: true });
    try {
      expect((await open.describe()).details.network).toBe("open");
    } finally {
      await open.close();
    }
  }, 240_000);

  it("3: keeps a sandbox past its idle timeout, counted from creation, when a run needs it", async () => {
    const short = await E2BSandbox.start({
      poolSize: 1,
      sandboxTimeoutMs: 60_000,
      lifetimeMarginMs: 10_000,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 40_000));
      const result = await short.execute({
        code: "import time\ntime.sleep(15)\nprint('alive')",
        tables: [],
        timeoutMs: 30_000,
      });
      expect(result.error).toBeNull();
      expect(result.stdout).toBe("alive\n");
    } finally {
      await short.close();
    }
  }, 240_000);

  it("4: uploads and reads back a table of several MB", async () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => `${i},${(i * 7919) % 100_003}`);
    const csv = `a,b\n${rows.join("\n")}\n`;
    const { sha256, uri } = await putArtifact(csv, "csv");
    const big: TableRef = {
      id: "table:big",
      name: "big",
      uri,
      sha256,
      rows: rows.length,
      columns: [
        { name: "a", dtype: "int64" },
        { name: "b", dtype: "int64" },
      ],
    };
    const result = await sandbox.execute({
      code: "copy = df.copy()\nprint(len(copy))",
      tables: [big],
      timeoutMs: 60_000,
    });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("200000\n");
    expect(result.tables.find((t) => t.variable === "copy")?.table.rows).toBe(200_000);
  }, 240_000);

  it("8: leaves no sandbox of its pool behind after close", async () => {
    const other = await E2BSandbox.start({ poolSize: 1 });
    const ids = other.sandboxIds;
    await other.close();
    const paginator = CloudSandbox.list({
      ...connection(),
      query: { metadata: { app: "tableminds" } },
    });
    const running: string[] = [];
    while (paginator.hasNext) {
      for (const s of await paginator.nextItems()) running.push(s.sandboxId);
    }
    for (const id of ids) expect(running).not.toContain(id);
  }, 240_000);
});
