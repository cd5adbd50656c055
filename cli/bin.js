#!/usr/bin/env node
// In a checkout, cli/main.ts sits beside this file: run the sources through tsx, so a stale
// dist/ never stands in for them. The npm package ships only this file of cli/ and the
// compiled dist/, and needs no TypeScript loader.
import { existsSync } from "node:fs";

const sources = new URL("./main.ts", import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import("../dist/cli/main.js"));
}
await main(process.argv);
