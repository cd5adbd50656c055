import { mkdtempSync, readdirSync, utimesSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxedJob } from "bullmq";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jobProcessor } from "../../cli/consume-jobs.js";
import { KeptResults } from "../../storage/queue/kept-results.js";
import { jobLabel, seal } from "../../storage/queue/seal.js";

const KEY = "0123456789abcdef".repeat(3);

function store(): KeptResults {
  return new KeptResults(mkdtempSync(path.join(os.tmpdir(), "tableminds-kept-")));
}

describe("results a consumer keeps until the queue has them", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("gives back a job's result for the same job and data only, until dropped", async () => {
    const kept = store();
    expect(kept.get("eval.r.q1", { a: 1 })).toBeUndefined();
    await kept.put("eval.r.q1", { a: 1 }, { record: { score: 1 } });
    expect(kept.get("eval.r.q1", { a: 1 })).toEqual({ record: { score: 1 } });
    // Another job's id, or the same id with other data, is not served this result.
    expect(kept.get("eval.r.q2", { a: 1 })).toBeUndefined();
    expect(kept.get("eval.r.q1", { a: 2 })).toBeUndefined();
    kept.drop("eval.r.q1");
    expect(kept.get("eval.r.q1", { a: 1 })).toBeUndefined();
  });

  it("forgets what was kept longer than a week", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-kept-"));
    const kept = new KeptResults(dir);
    await kept.put("old", 1, "old result");
    const longAgo = Date.now() / 1000 - 7 * 24 * 3600 - 60;
    for (const name of readdirSync(dir)) utimesSync(path.join(dir, name), longAgo, longAgo);
    await kept.put("new", 1, "new result");
    expect(kept.prune()).toBe(1);
    expect([kept.get("old", 1), kept.get("new", 1)]).toEqual([undefined, "new result"]);
  });

  it("hands a kept result over when the job comes back, without running it again", async () => {
    vi.stubEnv("TABLEMINDS_QUEUE_KEY", KEY);
    const kept = store();
    const id = "eval.r.q1";
    const data = seal(KEY, jobLabel("eval", id), { not: "a question" });
    await kept.put(id, data, "the sealed result");
    let graphsAsked = 0;
    const processor = jobProcessor(async () => {
      graphsAsked += 1;
      throw new Error("not to be run");
    }, kept);
    const job = { id, name: "eval", data } as unknown as SandboxedJob;
    expect(await processor(job)).toBe("the sealed result");
    expect(graphsAsked).toBe(0);
    // Other data under the id: run (and here refused, as the data are no question).
    const other = { id, name: "eval", data: seal(KEY, jobLabel("eval", id), { other: 1 }) };
    await expect(processor(other as unknown as SandboxedJob)).rejects.toThrow(
      /not an evaluation's question/,
    );
  });
});
