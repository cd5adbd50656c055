#!/usr/bin/env node
// In a checkout, cli/main.ts sits beside this file. It runs the JavaScript `npm run setup`
// compiled into .build/ while that was built from the sources as they are now (their stamp
// matches), else the sources themselves through tsx: a stale build never stands in for them.
// TABLEMINDS_FROM_SOURCES=1 runs the sources anyway. The npm package ships only this file of
// cli/ and the compiled dist/, and needs neither.
import { existsSync } from "node:fs";

const sources = new URL("./main.ts", import.meta.url);
let main;
if (existsSync(sources)) {
  const { freshBuild } = await import("../scripts/source-stamp.mjs");
  const built =
    process.env.TABLEMINDS_FROM_SOURCES === "1"
      ? undefined
      : freshBuild(new URL("..", import.meta.url).pathname);
  if (built) {
    ({ main } = await import(new URL(`file://${built}`).href));
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    ({ main } = await import(sources.href));
  }
} else {
  ({ main } = await import("../dist/cli/main.js"));
}
await main(process.argv);
