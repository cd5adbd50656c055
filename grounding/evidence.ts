import type {
  Attempt,
  CodeResult,
  Evidence,
  ExecResult,
  Figure,
  Lineage,
  OutputSpan,
} from "../blackboard/schemas.js";
import { describeFigure } from "./figure-text.js";

const MAX_OUTPUT_LINES = 50;
/** A result's packet names at most this many source cells as its parents. */
const MAX_RESULT_PARENTS = 20;

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

/** The id of a source cell's packet (as cellEvidence makes it). */
function cellId(table: string, row: number, column: string): string {
  return `${table}:r${row}:${column}`;
}

/**
 * The source cells a result rests on, as cell evidence ids: each traced row by each traced
 * column, table by table, at most MAX_RESULT_PARENTS. Untraced (null) rows or columns give none.
 */
export function lineageParents(lineage: Lineage[]): string[] {
  const parents: string[] = [];
  for (const { table, rows, columns } of lineage) {
    for (const row of rows ?? []) {
      for (const column of columns ?? []) {
        if (parents.length === MAX_RESULT_PARENTS) return parents;
        parents.push(cellId(table, row, column));
      }
    }
  }
  return parents;
}

/** The result's packet: its value (one scalar, else its text) anchored to the line that made it. */
function resultPacket(
  attempt: Attempt,
  result: CodeResult,
  stdout: string,
  source: string,
  time: string,
): Evidence {
  const line = result.line ?? 0;
  // A printed result is the last non-empty line of stdout, as the sandbox took it.
  const printed = result.from === "printed" ? outputLines(stdout).at(-1) : undefined;
  return {
    id: `${attempt.id}:result`,
    modality: "code",
    source,
    anchor: {
      kind: "code",
      attempt: attempt.id,
      lines: [line, line],
      stdout: printed ? [printed.start, printed.end] : [0, 0],
    },
    value: result.values.length === 1 ? (result.values[0] ?? null) : result.text,
    time,
    provenance: { attempt: attempt.id, parents: lineageParents(result.lineage) },
    confidence: 1,
  };
}

/** A line that draws: a call on pyplot, an axes or a figure, or pandas' `.plot`. */
const DRAWING = /\b(?:plt|ax\w*|fig\w*|axes)\s*(?:\.|\[)|\.plot\b/;

/** The lines of the code that draw, first to last; [0, 0] when none is recognised. */
export function drawingLines(code: string): [number, number] {
  const lines = code.split("\n").flatMap((line, i) => (DRAWING.test(line) ? [i + 1] : []));
  return lines.length > 0 ? [lines[0] ?? 0, lines.at(-1) ?? 0] : [0, 0];
}

/**
 * A figure's packet (`a1:fig1`): what it plots in words, anchored to the lines that draw,
 * with the source cells its lineage names as parents.
 */
function figurePacket(attempt: Attempt, figure: Figure, source: string, time: string): Evidence {
  return {
    id: `${attempt.id}:${figure.id}`,
    modality: "figure",
    source,
    anchor: {
      kind: "code",
      attempt: attempt.id,
      lines: drawingLines(attempt.code),
      stdout: [0, 0],
    },
    value: describeFigure(figure),
    time,
    provenance: { attempt: attempt.id, parents: lineageParents(figure.lineage) },
    confidence: figure.derived === "yes" ? 1 : 0.5,
  };
}

/**
 * Evidence packets of one execution: each printed line anchored to the code lines
 * that wrote it and its stdout slice, each DataFrame the code left behind anchored
 * to the line that assigned it, the code's result (its declared `result`, else its
 * last printed value) with the source cells its lineage names as parents, and each figure
 * it drew.
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
  if (result.result)
    packets.push(resultPacket(attempt, result.result, result.stdout, source, time));
  for (const figure of result.figures ?? []) {
    packets.push(figurePacket(attempt, figure, source, time));
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
    id: cell ? cellId(table, cell.row, column) : `${table}:col:${column}`,
    modality: "table",
    source,
    anchor: { kind: "cells", table, rows: cell ? [cell.row] : [], columns: [column] },
    value: cell ? cell.value : column,
    time,
    provenance: { attempt: "source", parents: [] },
    confidence: 1,
  };
}
