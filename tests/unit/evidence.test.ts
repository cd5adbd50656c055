import { describe, expect, it } from "vitest";
import { appendUniqueById, upsertById } from "../../blackboard/reducers.js";
import type { Attempt, CodeResult, ExecResult } from "../../blackboard/schemas.js";
import {
  cellEvidence,
  codeLinesFor,
  evidenceFromExecution,
  lineageParents,
  lineValue,
  outputLines,
} from "../../grounding/evidence.js";
import { claimItems } from "../../grounding/items.js";
import { carriedBy, claimed } from "../../grounding/matching.js";
import { verifyGrounding } from "../../grounding/verify.js";
import { codeResult, ranAttempt } from "../support/evidence.js";

const table = {
  id: "table:by_nation",
  name: "by_nation",
  uri: "/tmp/x.csv",
  sha256: "a".repeat(64),
  rows: 2,
  columns: [{ name: "nation", dtype: "object" }],
};

describe("evidence from an execution", () => {
  const stdout = "rows: 10\n203\n";
  const result: ExecResult = {
    ok: true,
    stdout,
    stderr: "",
    error: null,
    tables: [{ variable: "by_nation", line: 2, table, lineage: [] }],
    spans: [
      { line: 3, start: 0, end: 8 },
      { line: 3, start: 8, end: 9 },
      { line: 5, start: 9, end: 12 },
      { line: 5, start: 12, end: 13 },
    ],
    truncated: false,
    durationMs: 4,
    result: null,
  };
  const attempt: Attempt = { id: "a1", code: "", raw: "", result, parseError: null };
  const packets = evidenceFromExecution(attempt, result, "execute", "2026-01-01T00:00:00Z");

  it("anchors each printed line to the code line that wrote it and its stdout slice", () => {
    const [first, second] = packets;
    expect(first?.anchor).toEqual({ kind: "code", attempt: "a1", lines: [3, 3], stdout: [0, 8] });
    expect(first?.value).toBe("rows: 10");
    expect(second?.anchor).toEqual({ kind: "code", attempt: "a1", lines: [5, 5], stdout: [9, 12] });
    expect(second?.value).toBe(203);
    expect(stdout.slice(9, 12)).toBe("203");
  });

  it("posts intermediate tables by reference, anchored to their assigning line", () => {
    const tablePacket = packets.find((p) => p.id === "a1:by_nation");
    expect(tablePacket?.modality).toBe("table");
    expect(tablePacket?.anchor).toEqual({
      kind: "code",
      attempt: "a1",
      lines: [2, 2],
      stdout: [0, 0],
    });
    expect(tablePacket?.value).toMatchObject({ name: "by_nation", sha256: "a".repeat(64) });
  });

  it("posts no result packet when the run has no result", () => {
    expect(packets.map((p) => p.id)).toEqual(["a1:out1", "a1:out2", "a1:by_nation"]);
  });

  it("splits output into non-empty lines with offsets", () => {
    expect(outputLines("a\n\nbc\n")).toEqual([
      { text: "a", start: 0, end: 1 },
      { text: "bc", start: 3, end: 5 },
    ]);
    expect(codeLinesFor([{ line: 7, start: 0, end: 4 }], 5, 9)).toEqual([0, 0]);
    expect(lineValue(" -3.5 ")).toBe(-3.5);
    expect(lineValue("3.5 kg")).toBe("3.5 kg");
  });
});

describe("the result's evidence", () => {
  const base: ExecResult = {
    ok: true,
    stdout: "rows: 10\n203\n",
    stderr: "",
    error: null,
    tables: [],
    spans: [
      { line: 3, start: 0, end: 9 },
      { line: 5, start: 9, end: 13 },
    ],
    truncated: false,
    durationMs: 4,
    result: null,
  };
  const code: CodeResult = {
    from: "printed",
    kind: "scalar",
    values: [203],
    labels: [],
    text: "203",
    line: 5,
    derived: "yes",
    derivation: "changed when the tables' values were perturbed: computed from the table",
    lineage: [
      { table: "medals", rows: [0, 2], columns: ["gold", "silver"] },
      { table: "hosts", rows: null, columns: ["city"] },
    ],
  };
  const packetOf = (result: ExecResult) => {
    const attempt: Attempt = { id: "a1", code: "", raw: "", result, parseError: null };
    return evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z").find(
      (p) => p.id === "a1:result",
    );
  };

  it("anchors a printed result to its line and stdout slice, with its lineage's cells as parents", () => {
    const packet = packetOf({ ...base, result: code });
    expect(packet).toMatchObject({
      modality: "code",
      anchor: { kind: "code", attempt: "a1", lines: [5, 5], stdout: [9, 12] },
      value: 203,
      confidence: 1,
      provenance: {
        attempt: "a1",
        // Rows by columns of each traced table; an untraced table (rows null) gives none.
        parents: ["medals:r0:gold", "medals:r0:silver", "medals:r2:gold", "medals:r2:silver"],
      },
    });
    // The same ids as the source cells' own packets.
    expect(packet?.provenance.parents[0]).toBe(
      cellEvidence("medals", { row: 0, value: "39" }, "gold", "lookup", "t").id,
    );
    // Printed lines keep their packets.
    expect(
      evidenceFromExecution(
        { id: "a1", code: "", raw: "", result: { ...base, result: code }, parseError: null },
        { ...base, result: code },
        "executor",
        "t",
      ).map((p) => p.id),
    ).toEqual(["a1:out1", "a1:out2", "a1:result"]);
  });

  it("gives a declared result with several values its text, and no stdout slice", () => {
    const series: CodeResult = {
      ...code,
      from: "declared",
      kind: "series",
      values: ["United States", "China"],
      labels: [0, 1],
      text: "0    United States\n1            China",
      line: 2,
      lineage: [{ table: "medals", rows: [0, 1], columns: ["nation"] }],
    };
    const packet = packetOf({ ...base, result: series });
    expect(packet?.anchor).toEqual({ kind: "code", attempt: "a1", lines: [2, 2], stdout: [0, 0] });
    expect(packet?.value).toBe(series.text);
    expect(packet?.provenance.parents).toEqual(["medals:r0:nation", "medals:r1:nation"]);
  });

  it("names at most 20 parent cells, none for untraced lineage", () => {
    const rows = Array.from({ length: 30 }, (_, i) => i);
    expect(lineageParents([{ table: "t", rows, columns: ["a"] }])).toHaveLength(20);
    expect(lineageParents([{ table: "t", rows, columns: null }])).toEqual([]);
    expect(lineageParents([{ table: "t", rows: [], columns: ["a"] }])).toEqual([]);
  });
});

describe("one grounding engine", () => {
  const printed = { rounding: true, percentQuestion: false };

  it("matches numbers at the answer's precision and words case-insensitively", () => {
    const carried = (item: string, value: string | number) =>
      carriedBy(claimed(item), value, printed);
    expect(carried("12.09", 12.0913)).toBe(true);
    expect(carried("12.1", "mean: 12.0913")).toBe(true);
    expect(carried("203", "total gold: 203")).toBe(true);
    expect(carried("203", "total gold: 204")).toBe(false);
    expect(carried("1,062", 1062)).toBe(true);
    expect(carried("ROC", "winner: roc")).toBe(true);
    expect(carried("Japan", "winner: ROC")).toBe(false);
  });

  it("cuts an answer into the same items wherever it is cut", () => {
    expect(claimItems("1,062")).toEqual([{ item: "1,062", kind: "number" }]);
    expect(claimItems("March 3, 1999")).toEqual([{ item: "March 3, 1999", kind: "text" }]);
    expect(claimItems("Japan, China and ROC").map((i) => i.item)).toEqual([
      "Japan",
      "China",
      "ROC",
    ]);
  });

  it("supports the answer by the code's result, never by a printed line that merely carries it", async () => {
    const derived = ranAttempt(
      "a1",
      'print("rows:", n)\nprint(total)',
      "rows: 10\n203\n",
      [],
      codeResult([203], { from: "printed", line: 2 }),
    );
    const input = { answer: "203", question: "What is the total?" };
    const { checks } = await verifyGrounding({
      ...input,
      evidence: derived.evidence,
      attempts: [derived.attempt],
    });
    expect(checks.map((c) => c.supports)).toEqual([["a1:result"]]);
    // The same lines printed, with no result known: "203" only occurs in a1:out2.
    const unknown = ranAttempt("a1", 'print("rows:", n)\nprint(total)', "rows: 10\n203\n");
    const again = await verifyGrounding({
      ...input,
      evidence: unknown.evidence,
      attempts: [unknown.attempt],
    });
    expect(again.checks.map((c) => [c.support, c.supports])).toEqual([["coincidental", []]]);
    expect(again.checks[0]?.note).toMatch(/merely occurs in a1:out2/);
  });
});

describe("reducers", () => {
  it("appends evidence once per id", () => {
    const a = { id: "x", v: 1 };
    expect(
      appendUniqueById(
        [a],
        [
          { id: "x", v: 2 },
          { id: "y", v: 3 },
        ],
      ),
    ).toEqual([a, { id: "y", v: 3 }]);
  });

  it("replaces an attempt by id and appends new ones", () => {
    expect(
      upsertById(
        [{ id: "a1", v: 1 }],
        [
          { id: "a1", v: 2 },
          { id: "a2", v: 3 },
        ],
      ),
    ).toEqual([
      { id: "a1", v: 2 },
      { id: "a2", v: 3 },
    ]);
  });
});
