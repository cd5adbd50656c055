import { describe, expect, it } from "vitest";
import { appendUniqueById, upsertById } from "../../blackboard/reducers.js";
import type { Attempt, Evidence, ExecResult } from "../../blackboard/schemas.js";
import {
  codeLinesFor,
  evidenceFromExecution,
  lineValue,
  outputLines,
} from "../../grounding/evidence.js";
import { findCells, matchingEvidence, valueMatches } from "../../grounding/legacy-items.js";

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
    tables: [{ variable: "by_nation", line: 2, table }],
    spans: [
      { line: 3, start: 0, end: 8 },
      { line: 3, start: 8, end: 9 },
      { line: 5, start: 9, end: 12 },
      { line: 5, start: 12, end: 13 },
    ],
    truncated: false,
    durationMs: 4,
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

describe("grounding helpers", () => {
  it("matches numbers at the answer's precision and words case-insensitively", () => {
    expect(valueMatches("12.09", 12.0913)).toBe(true);
    expect(valueMatches("12.1", "mean: 12.0913")).toBe(true);
    expect(valueMatches("203", "total gold: 203")).toBe(true);
    expect(valueMatches("203", "total gold: 204")).toBe(false);
    expect(valueMatches("1,062", 1062)).toBe(true);
    expect(valueMatches("ROC", "winner: roc")).toBe(true);
    expect(valueMatches("Japan", "winner: ROC")).toBe(false);
  });

  it("selects the evidence that carries the answer", () => {
    const base = {
      modality: "code" as const,
      source: "execute",
      anchor: {
        kind: "code" as const,
        attempt: "a1",
        lines: [1, 1] as [number, number],
        stdout: [0, 1] as [number, number],
      },
      time: "t",
      provenance: { attempt: "a1", parents: [] },
      confidence: 1,
    };
    const evidence: Evidence[] = [
      { ...base, id: "a1:out1", value: "rows: 10" },
      { ...base, id: "a1:out2", value: 203 },
    ];
    expect(matchingEvidence("203", evidence)).toEqual(["a1:out2"]);
  });

  it("finds source cells equal to answer items", () => {
    const hits = findCells(
      ["ROC", "20"],
      ["nation", "gold"],
      [
        ["Japan", "27"],
        ["ROC", "20"],
      ],
    );
    expect(hits).toEqual([
      { row: 1, column: "nation", value: "ROC" },
      { row: 1, column: "gold", value: "20" },
    ]);
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
