import { isUtf8 } from "node:buffer";
import { createRequire } from "node:module";
import iconv from "iconv-lite";
import { decodeText, rejectBinary, TableLoadError } from "./errors.js";
import { rejectLongLines } from "./line-limits.js";

/** Bytes chardet looks at; enough for its statistics, cheap on a large file. */
const DETECT_SAMPLE_BYTES = 64 * 1024;
/** Below this chardet confidence (0-100) a guess is not taken. */
const MIN_CONFIDENCE = 10;

/** A text encoding as the WHATWG decoder names it, e.g. `windows-1252`, `shift_jis`. */
export type EncodingName = string;

/**
 * The decoder's name for an encoding label (`latin1`, `cp1252`, `Shift-JIS`, `utf8`, ...).
 * Throws a TableLoadError for `file` when no decoder knows the label.
 */
export function resolveEncoding(label: string, file: string): EncodingName {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    throw new TableLoadError(
      file,
      `unknown encoding ${JSON.stringify(label)} (use a name such as utf-8, windows-1252, latin1, shift_jis, gb18030 or utf-16le)`,
    );
  }
}

/** Whether a decoder knows the encoding label. */
export function isKnownEncoding(label: string): boolean {
  try {
    new TextDecoder(label.trim());
    return true;
  } catch {
    return false;
  }
}

/** Bytes Windows-1252 leaves undefined; a file holding one is ISO-8859-1 proper. */
const UNDEFINED_IN_CP1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/**
 * Windows-1252 or ISO-8859-1, decided by the bytes 0x80-0x9F: printable characters
 * (euro sign, dashes, quotes) in the first, control codes in the second. The WHATWG decoder
 * names both windows-1252, and Node's reads every byte of it as Latin-1 (0x96 becomes
 * U+0096, not an en dash), so these two are decoded by iconv-lite.
 */
function westernEncoding(bytes: Uint8Array): EncodingName {
  for (const byte of bytes) if (UNDEFINED_IN_CP1252.has(byte)) return "iso-8859-1";
  return "windows-1252";
}

function decodeLenient(bytes: Uint8Array, encoding: EncodingName): string {
  if (encoding === "windows-1252" || encoding === "iso-8859-1") {
    return iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding);
  }
  return new TextDecoder(encoding).decode(bytes);
}

/** Line (1-based) of the first byte `encoding` cannot decode. */
function firstBadLine(bytes: Uint8Array, encoding: EncodingName): number {
  const lenient = decodeLenient(bytes, encoding);
  const at = lenient.indexOf("\uFFFD");
  return lenient.slice(0, Math.max(at, 0)).split("\n").length;
}

/** Decodes `bytes` as `encoding`, or throws a TableLoadError saying on which line it fails. */
export function decodeAs(bytes: Uint8Array, encoding: EncodingName, file: string): string {
  // Every byte has a character in both, so neither can fail.
  if (encoding === "windows-1252" || encoding === "iso-8859-1")
    return decodeLenient(bytes, encoding);
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    throw new TableLoadError(
      file,
      `not valid ${encoding} text (first bad byte on line ${firstBadLine(bytes, encoding)}); check the encoding`,
    );
  }
}

/** chardet's names the decoder reads differently (ISO-8859-1 is read as its superset). */
const DECODER_NAMES: Record<string, string> = {
  "ISO-8859-1": "windows-1252",
  "ISO-8859-9": "windows-1254",
};

/**
 * The most likely non-UTF-8 encoding of `bytes` that decodes them without error, or null.
 * Only meaningful for bytes that are not valid UTF-8.
 */
export function detectEncoding(bytes: Uint8Array): EncodingName | null {
  const sample = bytes.subarray(0, DETECT_SAMPLE_BYTES);
  // Loaded only for bytes that are not UTF-8, which most tables never are.
  const { analyse } = createRequire(import.meta.url)("chardet") as typeof import("chardet");
  for (const match of analyse(sample)) {
    if (match.confidence < MIN_CONFIDENCE || match.name.startsWith("UTF")) continue;
    let encoding: EncodingName;
    try {
      encoding = new TextDecoder(DECODER_NAMES[match.name] ?? match.name).encoding;
    } catch {
      continue; // e.g. ISO-2022 variants the decoder lacks
    }
    if (encoding === "windows-1252") return westernEncoding(bytes);
    try {
      new TextDecoder(encoding, { fatal: true }).decode(bytes);
      return encoding;
    } catch {}
  }
  return null;
}

/**
 * Whether bytes that are not valid UTF-8 are mostly well-formed multi-byte UTF-8 with a few
 * bad bytes: UTF-8 with damage, where guessing a legacy encoding would garble the rest.
 * (Legacy double-byte text forms a UTF-8 sequence only now and then, by chance.)
 */
export function looksLikeBrokenUtf8(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, DETECT_SAMPLE_BYTES * 16);
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < sample.length; i++) {
    const lead = sample[i] ?? 0;
    if (lead < 0x80) continue;
    const length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    let ok = length > 0 && i + length <= sample.length;
    for (let k = 1; ok && k < length; k++) ok = ((sample[i + k] ?? 0) & 0xc0) === 0x80;
    if (ok) {
      valid++;
      i += length - 1;
    } else invalid++;
  }
  return valid >= 4 * invalid;
}

/** The text of a table file and, when its encoding was guessed, a warning saying so. */
export interface DecodedText {
  text: string;
  encoding: EncodingName;
  warning?: string;
}

/**
 * Decodes a text table: as `encoding` when one is named; else UTF-8, UTF-16 by its
 * byte-order mark, or a legacy encoding (Latin-1/Windows-1252, Shift-JIS, ...) detected
 * from the bytes when they are not UTF-8. Throws a TableLoadError for `file` otherwise.
 */
export function decodeTable(bytes: Uint8Array, file: string, encoding?: string): DecodedText {
  // One record a line: a line of many megabytes is no table (JSON may well be one line).
  if (!/\.json$/i.test(file)) rejectLongLines(bytes, file);
  if (encoding !== undefined) {
    let name = resolveEncoding(encoding, file);
    if (!name.startsWith("utf-16")) rejectBinary(bytes, file);
    if (name === "windows-1252") name = westernEncoding(bytes);
    return { text: decodeAs(bytes, name, file), encoding: name };
  }
  if (bytes[0] === 0xff || bytes[0] === 0xfe || isUtf8(bytes)) {
    return { text: decodeText(bytes, file), encoding: "utf-8" };
  }
  rejectBinary(bytes, file);
  const detected = looksLikeBrokenUtf8(bytes) ? null : detectEncoding(bytes);
  if (detected === null) {
    const line = firstBadLine(bytes, "utf-8");
    throw new TableLoadError(
      file,
      `not valid UTF-8 text (first bad byte on line ${line}) and no other encoding fits; save the file as UTF-8 or name its encoding (--encoding)`,
    );
  }
  return {
    text: decodeAs(bytes, detected, file),
    encoding: detected,
    warning: `read as ${detected} text (detected: it is not UTF-8); if letters look wrong, name the encoding (--encoding)`,
  };
}
