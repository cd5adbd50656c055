import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

process.env.TABLEMINDS_HOME = mkdtempSync(path.join(os.tmpdir(), "tm-prof-"));
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";
process.env.LANGSMITH_TRACING = "false";
const { graph } = await import("/work/main/graphs/table_qa/graph.js");
const { closeSandboxes } = await import("/work/main/sandbox/index.js");
const { MEDALS_QUESTION } = await import("/work/main/tests/support/scripts.js");
const { spawnStub } = await import("/work/main/bench/spawn-stub.js");
const stub = await spawnStub(0);
process.env.OPENAI_BASE_URL = stub.url;
const TABLE = "/work/main/examples/olympics_2020_medals.csv";
for (let i = 0; i < 5; i++)
  await graph.invoke({ question: MEDALS_QUESTION, sources: [{ path: TABLE }] });
const { Session } = await import("node:inspector/promises");
const s = new Session();
s.connect();
await s.post("Profiler.enable");
await s.post("Profiler.setSamplingInterval", { interval: 100 });
await s.post("Profiler.start");
const t = performance.now();
for (let i = 0; i < 40; i++)
  await graph.invoke({ question: MEDALS_QUESTION, sources: [{ path: TABLE }] });
console.log("per run", (performance.now() - t) / 40);
const { profile } = await s.post("Profiler.stop");
(await import("node:fs")).writeFileSync("/tmp/prof/p.cpuprofile", JSON.stringify(profile));
stub.stop();
await closeSandboxes();
