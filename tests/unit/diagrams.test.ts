import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { drawGraphs, markedGraphs, withDrawings } from "../../graphs/diagrams.js";

const root = path.resolve(import.meta.dirname, "../..");

describe("the pictures of the graphs in the docs", () => {
  it.each(["README.md", "docs/architecture.md"])(
    "%s shows the graphs as compiled",
    async (file) => {
      const text = readFileSync(path.join(root, file), "utf8");
      expect(markedGraphs(text).length).toBeGreaterThan(0);
      // When this fails, run `npm run docs:graphs` and read what changed.
      expect(withDrawings(text, await drawGraphs())).toBe(text);
    },
  );

  it("draws the wiring: solve as one node of table_qa, its own loop inside it", async () => {
    const drawn = await drawGraphs();
    expect(drawn.table_qa).toContain("reflector --> solve;");
    expect(drawn.table_qa).toContain("checker -.-> finalizer;");
    expect(drawn.solve).toContain("executor -.-> coder;");
    expect(drawn.solve).toContain("__start__ -.-> coder;");
  });
});
