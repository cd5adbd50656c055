import { readFileSync } from "node:fs";
import path from "node:path";

/** The files a source file imports by relative specifier (`from "./x.js"`, `import("../y.js")`), resolved. */
export function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) =>
    path.resolve(path.dirname(file), m[1] ?? ""),
  );
}
