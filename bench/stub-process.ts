/**
 * Runs the scripted medals team on a stub OpenAI server in its own process, as a real
 * model server would be, so its work never lands on the measured process's event loop.
 * Prints the server URL on the first line of stdout; exits when stdin closes.
 *
 *   npx tsx bench/stub-process.ts <latencyMs> [medals|tablebench]
 */
import { medalsTeam } from "../tests/support/scripts.js";
import { startStubOpenAI } from "../tests/support/stub-openai.js";
import { tablebenchTeam } from "../tests/support/tablebench-team.js";

const latencyMs = Number(process.argv[2] ?? 0);
const team = process.argv[3] === "tablebench" ? tablebenchTeam : medalsTeam();
const stub = await startStubOpenAI({ respond: team, latencyMs, idleTimeoutMs: 600_000 });
process.stdout.write(`${stub.url}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  // The benchmark reads this to tell the stub's own CPU from the runtime's.
  const { user, system } = process.cpuUsage();
  process.stderr.write(`stub-cpu-ms ${Math.round((user + system) / 1000)}\n`);
  void stub.close().then(() => process.exit(0));
});
