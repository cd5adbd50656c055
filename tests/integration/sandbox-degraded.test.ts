/**
 * The local pool on a kernel without Landlock (the documented degraded mode, simulated with
 * `landlock: false`): generated code is refused with one line unless the operator opted in
 * through TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1; once opted in, seccomp and the audit hook
 * still stop what they can (pidfds, prlimit, changes through a descriptor outside scratch).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import {
  DEGRADED_OPT_IN,
  DEGRADED_REFUSAL,
  degradedRefusal,
  degradedSandboxAllowed,
} from "../../sandbox/hardening.js";
import { LocalSandbox, LocalSandboxRefusedError } from "../../sandbox/local.js";
import { findPython } from "../../sandbox/python.js";
import { putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";
import { useInterpreterWithoutLandlock } from "../support/unconfined-interpreter.js";

const CORPUS = path.resolve(import.meta.dirname, "../support/hostile");
const SECRET = `degraded-secret-${process.pid}`;
/**
 * Corpus cases that read, wrote or killed outside a pool without Landlock at ec96b5d: the
 * first gets past the audit hook to this day (os.open's dir_fd is not in its event).
 */
const ESCAPES_WITHOUT_LANDLOCK = [
  "dir-fd-read.py",
  "chmod-dir-fd.py",
  "pidfd-signal-interpreter.py",
  "sqlite-attach.py",
  "prlimit-interpreter.py",
];

/**
 * A file outside scratch removed through a dir_fd the hook never saw: os.open's dir_fd is
 * not in CPython's "open" audit event, so the directory is opened past the hook; the
 * removal then names it as its dir_fd, which the hook now follows.
 */
const REMOVE_THROUGH_DIR_FD = `
import os
scratch = os.getcwd()
depth = scratch.count("/")
below = "sub/" * (depth + 1)
os.makedirs(below)
top = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(below)
outside = os.open("../" * depth + "{{VICTIM_DIR}}".lstrip("/"), os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
os.remove("victim.txt", dir_fd=outside)
print("removed")
`;

describe.runIf(process.platform === "linux")("the local pool without Landlock", () => {
  const saved = process.env[DEGRADED_OPT_IN];
  let python: string;
  let scratchRoot: string;
  let privateFile: string;
  let tmpFile: string;
  let victimDir: string;
  let own: TableRef;

  function corpus(file: string): string {
    return readFileSync(path.join(CORPUS, file), "utf8")
      .replaceAll("{{PRIVATE_FILE}}", privateFile)
      .replaceAll("{{TMP_FILE}}", tmpFile)
      .replaceAll("{{OWN_FILE}}", path.basename(own.uri));
  }

  beforeAll(async () => {
    useTempHome();
    python = (await findPython()).executable;
    scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-degraded-root-"));
    victimDir = mkdtempSync(path.join(os.tmpdir(), "tableminds-degraded-victim-"));
    privateFile = path.join(os.tmpdir(), `tableminds-degraded-private-${process.pid}.txt`);
    tmpFile = path.join(os.tmpdir(), `tableminds-degraded-tmp-${process.pid}.db`);
    writeFileSync(privateFile, `${SECRET}\n`, { mode: 0o600 });
    writeFileSync(path.join(victimDir, "victim.txt"), "intact\n");
    own = {
      id: "table:own",
      name: "own",
      ...(await putArtifact("x\n1\n", "csv")),
      rows: 1,
      columns: [],
    };
  });

  afterEach(() => {
    if (saved === undefined) delete process.env[DEGRADED_OPT_IN];
    else process.env[DEGRADED_OPT_IN] = saved;
  });

  afterAll(() => {
    rmSync(scratchRoot, { recursive: true, force: true });
    rmSync(victimDir, { recursive: true, force: true });
    rmSync(privateFile, { force: true });
    rmSync(tmpFile, { force: true });
  });

  it("takes the opt-in from the operator's environment only, and only as =1", () => {
    expect(degradedSandboxAllowed({ [DEGRADED_OPT_IN]: "1" })).toBe(true);
    expect(degradedSandboxAllowed({ [DEGRADED_OPT_IN]: " 1 " })).toBe(true);
    for (const value of [undefined, "", "0", "true", "yes"]) {
      expect(degradedSandboxAllowed({ [DEGRADED_OPT_IN]: value })).toBe(false);
    }
    const confined = { landlock: true, kernelWriteConfinement: true, kernelReadConfinement: true };
    expect(degradedRefusal(confined, false)).toBeUndefined();
    expect(degradedRefusal({ ...confined, landlock: false }, false)).toBe(DEGRADED_REFUSAL);
    expect(degradedRefusal({ ...confined, kernelReadConfinement: false }, false)).toBe(
      DEGRADED_REFUSAL,
    );
    expect(degradedRefusal({ ...confined, landlock: false }, true)).toBeUndefined();
  });

  it("refuses generated code with one line by default, whatever the request says", async () => {
    delete process.env[DEGRADED_OPT_IN];
    const sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot, landlock: false });
    try {
      expect((await sandbox.info()).protections.landlock).toBe(false);
      expect(sandbox.refusal).toBe(DEGRADED_REFUSAL);
      expect(DEGRADED_REFUSAL).not.toContain("\n");
      expect(DEGRADED_REFUSAL).toMatch(/this kernel has no Landlock/);
      expect(DEGRADED_REFUSAL).toMatch(/use E2B \(sandbox: e2b\) or a kernel with Landlock/);
      expect(DEGRADED_REFUSAL).toContain(`set ${DEGRADED_OPT_IN}=1`);
      const interpreters = sandbox.interpreterPids;
      for (const file of ESCAPES_WITHOUT_LANDLOCK) {
        const attempt = sandbox.execute({
          code: corpus(file),
          tables: [own],
          // Unknown fields of a request are dropped: a caller cannot opt in.
          ...{ allowDegraded: true, [DEGRADED_OPT_IN]: "1" },
        });
        await expect(attempt, file).rejects.toThrow(LocalSandboxRefusedError);
        await expect(attempt, file).rejects.toThrow(DEGRADED_REFUSAL);
      }
      expect(sandbox.interpreterPids).toEqual(interpreters);
      expect((statSync(privateFile).mode & 0o777).toString(8)).toBe("600");
      expect(() => statSync(tmpFile)).toThrow();
    } finally {
      await sandbox.close();
    }
  });

  it("runs generated code once the operator opted in", async () => {
    process.env[DEGRADED_OPT_IN] = "1";
    const sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot, landlock: false });
    try {
      expect(sandbox.refusal).toBeUndefined();
      const result = await sandbox.execute({ code: "print(int(df['x'].sum()))", tables: [own] });
      expect(result.error).toBeNull();
      expect(result.stdout).toBe("1\n");
    } finally {
      await sandbox.close();
    }
  });

  describe("what still holds once opted in", () => {
    const unconfined = useInterpreterWithoutLandlock(
      "degraded",
      () => python,
      () => scratchRoot,
    );
    const execute = unconfined.execute;

    it("really runs the children without Landlock, with seccomp", () => {
      expect(unconfined.interpreter().readiness.protections.landlock).toBe(false);
      expect(unconfined.interpreter().readiness.protections.hookResolvesDescriptors).toBe(true);
      if (unconfined.interpreter().readiness.protections.seccomp) {
        expect(unconfined.interpreter().readiness.protections.kernelMetadataConfinement).toBe(true);
        expect(unconfined.interpreter().readiness.protections.kernelProcessConfinement).toBe(true);
      }
    });

    it("cannot kill the interpreter through a pidfd (seccomp; Landlock's signal scope is gone)", async () => {
      const result = await execute(corpus("pidfd-signal-interpreter.py"));
      expect(result.error?.type).toBe("PermissionError");
      expect(result.stdout).toBe("");
      expect(unconfined.interpreter().alive).toBe(true);
      expect((await execute("print('next')")).stdout).toBe("next\n");
    });

    it("cannot remove a file outside scratch through a dir_fd opened past the hook", async () => {
      const result = await execute(REMOVE_THROUGH_DIR_FD.replaceAll("{{VICTIM_DIR}}", victimDir));
      expect(result.error?.type).toBe("PermissionError");
      expect(result.error?.message).toMatch(/changing files outside the scratch directory/);
      expect(readdirSync(victimDir)).toEqual(["victim.txt"]);
    });

    it("cannot read its own memory, which may hold other requests' table bytes", async () => {
      const files = ["/proc/self/mem", "/proc/self/task/{tid}/mem", "/proc/self/map_files/{map}"];
      for (const file of files) {
        const code =
          "import os, threading\n" +
          `path = ${JSON.stringify(file)}.replace("{tid}", str(threading.get_native_id()))\n` +
          "path = path.replace('{map}', sorted(os.listdir('/proc/self/map_files'))[0])\n" +
          "print(open(path, 'rb').read(1))";
        const result = await execute(code);
        expect(result.error?.type, file).toBe("PermissionError");
        expect(result.stdout, file).toBe("");
      }
      expect((await execute("print(len(open('/proc/self/status').read()) > 0)")).stdout).toBe(
        "True\n",
      );
    });

    it("cannot change a private file's mode through dir_fd, nor the copy of its table", async () => {
      const chmod = await execute(corpus("chmod-dir-fd.py"));
      expect(chmod.error?.type).toBe("PermissionError");
      expect((statSync(privateFile).mode & 0o777).toString(8)).toBe("600");
      const fchmod = await execute(corpus("fchmod-own-table.py"), [own]);
      expect(fchmod.error?.type).toBe("PermissionError");
    });
  });
});
