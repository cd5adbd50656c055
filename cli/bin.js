#!/usr/bin/env node
// Runs the TypeScript sources directly, so the command works from a plain checkout.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./main.ts");
await main(process.argv);
