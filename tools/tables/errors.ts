/** A table that cannot be read; `file` is the path as given, or `<inline>`. */
export class TableLoadError extends Error {
  override name = "TableLoadError";
  readonly file: string;
  readonly problem: string;

  constructor(file: string, problem: string, options?: ErrorOptions) {
    super(`cannot load table ${file}: ${problem}`, options);
    this.file = file;
    this.problem = problem;
  }
}

/** Turns a file-system error into a short phrase for a TableLoadError. */
export function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "ENOTDIR") return "no such file (a part of the path is not a directory)";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a directory, not a file";
  return error instanceof Error ? error.message : String(error);
}

/** Decodes strict UTF-8 (a leading BOM is dropped) or throws a TableLoadError for `file`. */
export function decodeUtf8(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    // Decoding again leniently only to say where the first bad byte is.
    const lenient = new TextDecoder("utf-8").decode(bytes);
    const at = lenient.indexOf("\uFFFD");
    const line = lenient.slice(0, Math.max(at, 0)).split("\n").length;
    throw new TableLoadError(
      file,
      `not valid UTF-8 text (first bad byte on line ${line}); save the file as UTF-8`,
    );
  }
}
