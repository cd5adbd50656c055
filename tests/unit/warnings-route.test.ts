import { describe, expect, it } from "vitest";
import { redirectWarnings, routeWarnings } from "../../cli/warnings.js";

describe("the CLI's warnings", () => {
  it("prints ours as ours and Node's as Node's, hiding none (an abort-listener pile-up is a bug to fix)", async () => {
    const lines: string[] = [];
    routeWarnings();
    const restore = redirectWarnings((line) => lines.push(line));
    try {
      const crowded = new Error(
        "Possible EventTarget memory leak detected. 11 abort listeners added to [AbortSignal]. MaxListeners is 10.",
      );
      crowded.name = "MaxListenersExceededWarning";
      process.emitWarning(crowded);
      process.emitWarning("a column was renamed", "TablemindsWarning");
      const other = new Error("11 close listeners added to [Socket]");
      other.name = "MaxListenersExceededWarning";
      process.emitWarning(other);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      restore();
    }
    expect(lines).toEqual([
      "(node) MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11 abort listeners added to [AbortSignal]. MaxListeners is 10.",
      "tableminds: warning: a column was renamed",
      "(node) MaxListenersExceededWarning: 11 close listeners added to [Socket]",
    ]);
  });
});
