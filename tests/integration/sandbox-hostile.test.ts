import { EventEmitter, once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecResult, TableRef } from "../../blackboard/schemas.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { artifactDir, putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";
import { descendants, eventually, withCmdline } from "./hostile/procfs.js";

const CORPUS = path.resolve(import.meta.dirname, "../support/hostile");
const SECRET = "sk-test-secret";
/** In files outside scratch that the code must not read: a private file, another run's table. */
const PRIVATE_SECRET = "sk-private-file-secret";
const OWN_CSV = "x\n1\n2\n3\n";

/** One file of the corpus: the code, and what its header says it must produce. */
interface HostileCase {
  file: string;
  code: string;
  /** An error type, or "ok". */
  expect: string;
  message?: RegExp;
  stdout?: RegExp;
  checks: string[];
  timeoutMs?: number;
  memoryMb?: number;
  outputBytes?: number;
  /** "own": the run gets the test's own table. */
  tables?: string;
}

function readCase(file: string): HostileCase {
  const code = readFileSync(path.join(CORPUS, file), "utf8");
  const header = new Map<string, string>();
  for (const line of code.split("\n")) {
    const match = /^# ([a-z-]+): (.*)$/.exec(line);
    if (match?.[1] && match[2] !== undefined) header.set(match[1], match[2]);
    if (!line.startsWith("#")) break;
  }
  const expected = header.get("expect");
  if (!expected) throw new Error(`${file}: no "# expect:" line`);
  const number = (key: string) => (header.has(key) ? Number(header.get(key)) : undefined);
  const regex = (key: string) => (header.has(key) ? new RegExp(header.get(key) ?? "") : undefined);
  return {
    file,
    code,
    expect: expected,
    message: regex("message"),
    stdout: regex("stdout"),
    checks: (header.get("check") ?? "").split(",").flatMap((c) => c.trim() || []),
    timeoutMs: number("timeout-ms"),
    memoryMb: number("memory-mb"),
    outputBytes: number("output-bytes"),
    tables: header.get("tables"),
  };
}

const CASES = readdirSync(CORPUS)
  .filter((file) => file.endsWith(".py"))
  .sort()
  .map(readCase);

describe.runIf(process.platform === "linux")("the local sandbox against hostile code", () => {
  let sandbox: LocalSandbox;
  let scratchRoot: string;
  let server: Server;
  let port = 0;
  /** The client port of every connection the server accepted, in order. */
  const accepted: number[] = [];
  const acceptedEvents = new EventEmitter();
  const savedKey = process.env.OPENAI_API_KEY;
  const marker = `${process.pid}-${Date.now()}`;
  const projectFile = path.resolve(`hostile-${marker}.txt`);
  const tmpFile = path.join(os.tmpdir(), `tableminds-hostile-${marker}.txt`);
  const privateFile = path.join(os.tmpdir(), `tableminds-private-${marker}.txt`);
  let ownTable: TableRef;
  let otherTable: string;

  beforeAll(async () => {
    useTempHome();
    process.env.OPENAI_API_KEY = SECRET;
    writeFileSync(privateFile, `aws_secret_access_key = ${PRIVATE_SECRET}\n`, { mode: 0o600 });
    const own = await putArtifact(OWN_CSV, "csv");
    ownTable = {
      id: "table:own",
      name: "own",
      ...own,
      rows: 3,
      columns: [{ name: "x", dtype: "int64" }],
    };
    otherTable = (await putArtifact(`account,secret\nbob,${PRIVATE_SECRET}\n`, "csv")).uri;
    scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-hostile-root-"));
    server = createServer((socket) => {
      accepted.push(socket.remotePort ?? 0);
      acceptedEvents.emit("accepted", socket.remotePort);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    server.unref();
    const address = server.address();
    port = typeof address === "object" && address ? address.port : 0;
    sandbox = await LocalSandbox.start({ interpreters: 2, scratchRoot });
  });

  afterAll(async () => {
    await sandbox?.close();
    await new Promise((resolve) => server?.close(resolve));
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
    rmSync(projectFile, { force: true });
    rmSync(tmpFile, { force: true });
    rmSync(privateFile, { force: true });
    rmSync(scratchRoot, { recursive: true, force: true });
  });

  it("has a corpus to run", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  it("reports the protections it relies on as active", async () => {
    const { protections } = await sandbox.info();
    expect(protections).toMatchObject({
      auditHook: true,
      rlimitCpu: true,
      rlimitAs: true,
      rlimitFsize: true,
      rlimitNofile: true,
      scrubbedEnv: true,
      scratchDir: true,
      wallClockKill: true,
      outputCap: true,
      forkAhead: true,
      recursionCap: true,
      readConfinement: true,
    });
    // With Landlock, reads are refused below Python too, not only by the audit hook.
    if (protections.landlock) expect(protections.kernelReadConfinement).toBe(true);
  });

  /**
   * Connections the code made, however late they reach the server: the test makes one
   * itself and waits until the server has accepted it. Connections are accepted in the
   * order they were made, so any the code made before is counted by then.
   */
  async function connectionsFromCode(): Promise<number> {
    const probe = connect(port, "127.0.0.1");
    await once(probe, "connect");
    const own = probe.localPort;
    if (!accepted.includes(own ?? -1)) {
      await new Promise<void>((resolve) => {
        const seen = (remotePort: number | undefined) => {
          if (remotePort !== own) return;
          acceptedEvents.off("accepted", seen);
          resolve();
        };
        acceptedEvents.on("accepted", seen);
      });
    }
    probe.destroy();
    const fromCode = accepted.filter((remotePort) => remotePort !== own);
    accepted.length = 0;
    return fromCode.length;
  }

  /** The only processes below an interpreter are its parked child and its parked run, once the dying are reaped. */
  async function onlyParkedChildren(): Promise<string> {
    let report = "";
    const settled = await eventually(() => {
      report = sandbox.interpreterPids
        .flatMap((pid) => {
          const below = descendants(pid);
          // The parked child, and the process it parked for its request's first run.
          const children = below.filter((entry) => entry.ppid === pid);
          const parked = below.filter((entry) => children.some((c) => c.pid === entry.ppid));
          const strays = below.length - children.length - parked.length;
          return children.length > 1 || parked.length > 1 || strays > 0
            ? [
                `interpreter ${pid}: ${below.map((e) => `${e.pid}(${e.state}) ${e.cmdline}`).join("; ")}`,
              ]
            : [];
        })
        .join("\n");
      return report === "";
    });
    return settled ? "" : report;
  }

  function expectOutcome(hostile: HostileCase, result: ExecResult): void {
    if (hostile.expect === "ok") {
      expect(result.error).toBeNull();
      expect(result.ok).toBe(true);
    } else {
      expect(result.ok).toBe(false);
      expect(result.error?.type).toBe(hostile.expect);
      expect(result.error?.message ?? "").toMatch(hostile.message ?? /./);
    }
    if (hostile.stdout) expect(result.stdout).toMatch(hostile.stdout);
  }

  for (const hostile of CASES) {
    it(`survives ${hostile.file}`, async () => {
      const code = hostile.code
        .replaceAll("{{PORT}}", String(port))
        .replaceAll("{{PROJECT_FILE}}", projectFile)
        .replaceAll("{{TMP_FILE}}", tmpFile)
        .replaceAll("{{PRIVATE_FILE}}", privateFile)
        .replaceAll("{{ARTIFACT_DIR}}", artifactDir())
        .replaceAll("{{OTHER_TABLE}}", otherTable)
        .replaceAll("{{OWN_FILE}}", path.basename(ownTable.uri))
        .replaceAll("{{PACKAGE_JSON}}", path.resolve("package.json"));
      const interpretersBefore = sandbox.interpreterPids;
      const result = await sandbox.execute({
        code,
        tables: hostile.tables === "own" ? [ownTable] : [],
        // A short limit where the case is about the limit; elsewhere room for a loaded machine.
        timeoutMs: hostile.timeoutMs ?? (hostile.expect === "Timeout" ? 2_000 : 15_000),
        memoryMb: hostile.memoryMb,
        outputBytes: hostile.outputBytes,
      });
      expectOutcome(hostile, result);

      if (hostile.checks.includes("no-files")) {
        expect(existsSync(projectFile)).toBe(false);
        expect(existsSync(tmpFile)).toBe(false);
      }
      if (hostile.checks.includes("no-secret")) {
        expect(JSON.stringify(result)).not.toContain(SECRET);
        expect(JSON.stringify(result)).not.toContain(PRIVATE_SECRET);
      }
      if (hostile.checks.includes("own-intact")) {
        expect(readFileSync(ownTable.uri, "utf8")).toBe(OWN_CSV);
      }
      if (hostile.checks.includes("no-table-leak")) {
        expect(result.tables).toEqual([]);
        expect(result.stderr).toMatch(/table loot could not be stored/);
        expect(JSON.stringify(result)).not.toContain("root:");
      }
      if (hostile.checks.includes("truncated")) {
        expect(result.truncated).toBe(true);
        expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(hostile.outputBytes ?? 65_536);
      }

      // The runtime survived: same interpreters, and the next request on the pool works.
      expect(sandbox.interpreterPids).toEqual(interpretersBefore);
      const next = await sandbox.execute({ code: "print('next')", tables: [] });
      expect(next.stdout).toBe("next\n");
      expect(await onlyParkedChildren()).toBe("");
      // Once nothing of the code's is left running, nothing can connect any more.
      if (hostile.checks.includes("no-connection")) expect(await connectionsFromCode()).toBe(0);
    });
  }

  it("leaves no process behind after close()", async () => {
    const interpreters = sandbox.interpreterPids;
    expect(withCmdline(scratchRoot).length).toBeGreaterThanOrEqual(interpreters.length);
    await sandbox.close();
    expect(withCmdline(scratchRoot).map((e) => `${e.pid} ${e.cmdline}`)).toEqual([]);
    // Nor any scratch directory.
    expect(readdirSync(scratchRoot)).toEqual([]);
  });
});
