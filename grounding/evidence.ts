import type { Attempt, Evidence, ExecResult, OutputSpan } from "../blackboard/schemas.js";

const MAX_OUTPUT_LINES = 50;

/** A printed line as a value: a number when the whole line is one, else the text. */
export function lineValue(text: string): string | number {
  const trimmed = text.trim();
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}

/** The code lines whose output overlaps [start, end), as a range. */
export function codeLinesFor(spans: OutputSpan[], start: number, end: number): [number, number] {
  const lines = spans.filter((s) => s.start < end && s.end > start).map((s) => s.line);
  if (lines.length === 0) return [0, 0];
  return [Math.min(...lines), Math.max(...lines)];
}

/** Each non-empty stdout line as [start, end) character offsets. */
export function outputLines(stdout: string): { text: string; start: number; end: number }[] {
  const lines: { text: string; start: number; end: number }[] = [];
  let start = 0;
  for (const text of stdout.split("\n")) {
    const end = start + text.length;
    if (text.trim()) lines.push({ text, start, end });
    start = end + 1;
  }
  return lines;
}

/**
 * Evidence packets of one execution: each printed line anchored to the code lines
 * that wrote it and its stdout slice, and each DataFrame the code left behind
 * anchored to the line that assigned it.
 */
export function evidenceFromExecution(
  attempt: Attempt,
  result: ExecResult,
  source: string,
  time: string,
): Evidence[] {
  const packets: Evidence[] = [];
  const lines = outputLines(result.stdout).slice(0, MAX_OUTPUT_LINES);
  lines.forEach((line, i) => {
    packets.push({
      id: `${attempt.id}:out${i + 1}`,
      modality: "code",
      source,
      anchor: {
        kind: "code",
        attempt: attempt.id,
        lines: codeLinesFor(result.spans, line.start, line.end),
        stdout: [line.start, line.end],
      },
      value: lineValue(line.text),
      time,
      provenance: { attempt: attempt.id, parents: [] },
      confidence: result.ok ? 1 : 0.5,
    });
  });
  for (const produced of result.tables) {
    const at = produced.line ?? 0;
    packets.push({
      id: `${attempt.id}:${produced.variable}`,
      modality: "table",
      source,
      anchor: { kind: "code", attempt: attempt.id, lines: [at, at], stdout: [0, 0] },
      value: { ...produced.table, id: `${attempt.id}:${produced.variable}` },
      time,
      provenance: { attempt: attempt.id, parents: [] },
      confidence: result.ok ? 1 : 0.5,
    });
  }
  return packets;
}

/**
 * A source cell as evidence (or, with no cell, a column whose name carries an item). Its id
 * names the table, row and column, so whoever finds the same cell posts the same packet.
 */
export function cellEvidence(
  table: string,
  cell: { row: number; value: string } | null,
  column: string,
  source: string,
  time: string,
): Evidence {
  return {
    id: cell ? `${table}:r${cell.row}:${column}` : `${table}:col:${column}`,
    modality: "table",
    source,
    anchor: { kind: "cells", table, rows: cell ? [cell.row] : [], columns: [column] },
    value: cell ? cell.value : column,
    time,
    provenance: { attempt: "source", parents: [] },
    confidence: 1,
  };
}
