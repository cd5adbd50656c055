/** Rewrites the Mermaid pictures of the graphs in the README and docs/architecture.md. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { drawGraphs, withDrawings } from "../graphs/diagrams.js";

const root = path.resolve(import.meta.dirname, "..");
const drawn = await drawGraphs();
for (const file of ["README.md", "docs/architecture.md"]) {
  const at = path.join(root, file);
  const before = readFileSync(at, "utf8");
  const after = withDrawings(before, drawn);
  if (after !== before) writeFileSync(at, after);
  console.log(`${file}: ${after === before ? "current" : "redrawn"}`);
}
