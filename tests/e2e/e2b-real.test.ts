import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { putArtifact } from "../../tools/artifacts.js";
import { E2BSandbox } from "../../tools/sandbox/e2b.js";
import { useTempHome } from "../support/env.js";

/**
 * Against the real E2B (or a self-hosted one with E2B_DOMAIN): needs E2B_API_KEY, and
 * E2B_TEMPLATE naming a template with python3 and pandas (e.g. code-interpreter-v1)
 * unless the default template has them. Skipped without a key.
 */
describe.skipIf(!process.env.E2B_API_KEY)("the E2B sandbox on real E2B", () => {
  let sandbox: E2BSandbox;
  let medals: TableRef;

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
    sandbox = await E2BSandbox.start({ poolSize: 1 });
  }, 180_000);

  afterAll(async () => {
    await sandbox?.close();
  }, 60_000);

  it("runs a pandas snippet and brings back its output and table", async () => {
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
    const info = await sandbox.info();
    expect(info.backend).toBe("e2b");
    expect(info.protections.isolatedVm).toBe(true);
  }, 120_000);
});
