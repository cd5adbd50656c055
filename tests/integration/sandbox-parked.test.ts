/**
 * The child a request gets was forked ahead and kept, while it waited, only the cached
 * tables of the latest requests (interpreter.py, `RECENT_REQUESTS`): what it kept is shared with
 * the interpreter copy-on-write, what it dropped must still reach a request that needs it, and
 * nothing a request does to its own table may reach the next one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { useTempHome } from "../support/env.js";
import { tableRef } from "../support/table-fixtures.js";

const MARKER = `dropped-${process.pid}-${Date.now()}`;

/** Prints what of other tables plain Python reaches: the interpreter's cache and the frames' locals. */
const REACHABLE_TABLES = `
import sys
import pandas as pd
cache = getattr(sys.modules["__main__"], "_table_cache", {})
seen = [f"cache:{len(cache)}"]
frame = sys._getframe(0)
while frame is not None:
    for value in list(frame.f_locals.values()):
        frames = value.values() if isinstance(value, dict) else [value]
        for item in list(frames):
            if isinstance(item, pd.DataFrame) and item is not df:
                seen.append(f"{frame.f_code.co_name}:{len(item)}")
    frame = frame.f_back
print(" ".join(seen))
`;

describe.runIf(process.platform === "linux")("the child a request gets", () => {
  let sandbox: LocalSandbox;
  let numbers: TableRef;
  let secret: TableRef;
  let large: TableRef;

  beforeAll(async () => {
    useTempHome();
    numbers = await tableRef("numbers", "n\n1\n2\n3", [{ name: "n", dtype: "int64" }]);
    secret = await tableRef("secret", `account,note\nalice,${MARKER}`, [
      { name: "account", dtype: "object" },
      { name: "note", dtype: "object" },
    ]);
    // Over 1 MB: a child that lacks it is not left to read it itself (CHILD_LOADS_BYTES).
    const rows = ["id,label"];
    for (let i = 0; i < 80_000; i++) rows.push(`${i},label-${i % 977}`);
    large = await tableRef("large", rows.join("\n"), [
      { name: "id", dtype: "int64" },
      { name: "label", dtype: "object" },
    ]);
    // One interpreter: every request runs in a child of the interpreter that cached the tables before.
    sandbox = await LocalSandbox.start({ interpreters: 1 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it("leaves a table the previous request changed in place as it was", async () => {
    const change = [
      "df['n'] = df['n'] * 100",
      "df.drop(index=0, inplace=True)",
      "df.loc[99] = [7]",
      "print(int(df['n'].sum()))",
    ].join("\n");
    // The same table each time: the parked child kept it, shared with the interpreter.
    for (let round = 0; round < 3; round++) {
      const changed = await sandbox.execute({ code: change, tables: [numbers], lineage: false });
      expect(changed.error).toBeNull();
      expect(changed.stdout).toBe("507\n");
      const next = await sandbox.execute({
        code: "print(len(df), int(df['n'].sum()), list(df.index))",
        tables: [numbers],
        lineage: false,
      });
      expect(next.stdout).toBe("3 6 [0, 1, 2]\n");
    }
  });

  it("gets a cached table its parked child had dropped, small or large", async () => {
    // All three cached in the interpreter, then two requests with `numbers` alone: the child parked
    // after them keeps `numbers` only.
    for (const table of [secret, large, numbers, numbers]) {
      expect((await sandbox.execute({ code: "pass", tables: [table], timeoutMs: 60_000 })).ok).toBe(
        true,
      );
    }
    const small = await sandbox.execute({ code: "print(df.iloc[0, 1])", tables: [secret] });
    expect(small.error).toBeNull();
    expect(small.stdout).toBe(`${MARKER}\n`);
    await sandbox.execute({ code: "pass", tables: [numbers] });
    await sandbox.execute({ code: "pass", tables: [numbers] });
    const big = await sandbox.execute({
      code: "print(len(df), df['label'].nunique())",
      tables: [large],
      timeoutMs: 60_000,
    });
    expect(big.error).toBeNull();
    expect(big.stdout).toBe("80000 977\n");
  });

  it("reaches no other cached table, whether its child dropped it while parked or once asked", async () => {
    // `secret` among the latest requests' tables, so the parked child kept it until the
    // request came; then out of them, so the child dropped it while it waited.
    for (const before of [
      [secret, numbers],
      [numbers, numbers],
    ]) {
      for (const table of before) await sandbox.execute({ code: "pass", tables: [table] });
      const result = await sandbox.execute({ code: REACHABLE_TABLES, tables: [numbers] });
      expect(result.error).toBeNull();
      expect(result.stdout).toBe("cache:0\n");
      expect(JSON.stringify(result)).not.toContain(MARKER);
    }
  });
});
