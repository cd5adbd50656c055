/**
 * Metadata changes (mode, owner, times, extended attributes) and reaches into other
 * processes that Landlock does not cover: the seccomp program that refuses them below
 * Python, the audit hook that follows dir_fd and descriptors to where they really point,
 * and, against a real pool, files outside scratch and the artifact store left unchanged.
 */
import { execFile } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { findPython } from "../../sandbox/python.js";
import { putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";

const run = promisify(execFile);
const SANDBOX_DIR = path.resolve(import.meta.dirname, "../../sandbox");
const CORPUS = path.resolve(import.meta.dirname, "../support/hostile");

/**
 * Runs hardening.py's seccomp program, as built for one machine, on seccomp_data records
 * in a small BPF interpreter, and prints the verdict of each: ALLOW, EPERM, ENOSYS.
 */
const SIMULATE_SECCOMP = `
import json, struct, sys
sys.path.insert(0, sys.argv[1])
import hardening

VERDICTS = {0x7FFF0000: "ALLOW", 0x00050001: "EPERM", 0x00050026: "ENOSYS"}

def verdict(program, arch, nr, args):
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    pc = a = 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:
            a = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):
            taken = a == k if code == 0x15 else a >= k if code == 0x35 else bool(a & k)
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:
            return VERDICTS.get(k, hex(k))
        else:
            raise ValueError(f"unknown BPF instruction {code:#x}")

out = []
for machine, arch, nr, args in json.loads(sys.argv[2]):
    out.append(verdict(hardening._seccomp_program(machine), arch, nr, args))
print(json.dumps(out))
`;

const X86_64 = 0xc000003e;
const AARCH64 = 0xc00000b7;
const I386 = 0x40000003;

/** [machine, seccomp arch, syscall number, arguments, expected verdict, what it is] */
type SeccompCase = [string, number, number, number[], string, string];

const METADATA_X86: [number, string][] = [
  [90, "chmod"],
  [91, "fchmod"],
  [268, "fchmodat"],
  [452, "fchmodat2"],
  [92, "chown"],
  [93, "fchown"],
  [94, "lchown"],
  [260, "fchownat"],
  [132, "utime"],
  [235, "utimes"],
  [261, "futimesat"],
  [280, "utimensat"],
  [188, "setxattr"],
  [189, "lsetxattr"],
  [190, "fsetxattr"],
  [197, "removexattr"],
  [198, "lremovexattr"],
  [199, "fremovexattr"],
  [463, "setxattrat"],
  [466, "removexattrat"],
  [469, "file_setattr"],
  [434, "pidfd_open"],
  [424, "pidfd_send_signal"],
  [438, "pidfd_getfd"],
];
const METADATA_AARCH64: [number, string][] = [
  [52, "fchmod"],
  [53, "fchmodat"],
  [452, "fchmodat2"],
  [55, "fchown"],
  [54, "fchownat"],
  [88, "utimensat"],
  [5, "setxattr"],
  [6, "lsetxattr"],
  [7, "fsetxattr"],
  [14, "removexattr"],
  [15, "lremovexattr"],
  [16, "fremovexattr"],
  [463, "setxattrat"],
  [466, "removexattrat"],
  [469, "file_setattr"],
  [434, "pidfd_open"],
  [424, "pidfd_send_signal"],
  [438, "pidfd_getfd"],
];
const FS_IOC_SETFLAGS = 0x40086602;
const FS_IOC_FSSETXATTR = 0x401c5820;
const TCGETS = 0x5401;
const CLONE_THREAD_FLAGS = 0x3d0f00;
const SIGCHLD = 17;

const SECCOMP_CASES: SeccompCase[] = [
  ...METADATA_X86.map(([nr, name]): SeccompCase => ["x86_64", X86_64, nr, [], "EPERM", name]),
  ...METADATA_AARCH64.map(([nr, name]): SeccompCase => ["aarch64", AARCH64, nr, [], "EPERM", name]),
  // What honest code needs stays allowed.
  ["x86_64", X86_64, 0, [], "ALLOW", "read"],
  ["x86_64", X86_64, 257, [], "ALLOW", "openat"],
  ["x86_64", X86_64, 87, [], "ALLOW", "unlink"],
  ["aarch64", AARCH64, 56, [], "ALLOW", "openat"],
  ["x86_64", X86_64, 302, [0, 7, 0, 1], "ALLOW", "prlimit64 of this process"],
  ["x86_64", X86_64, 302, [4242, 0, 1, 0], "EPERM", "prlimit64 of another process"],
  ["aarch64", AARCH64, 261, [0, 7, 0, 1], "ALLOW", "prlimit64 of this process"],
  ["aarch64", AARCH64, 261, [4242, 0, 1, 0], "EPERM", "prlimit64 of another process"],
  ["x86_64", X86_64, 16, [1, TCGETS, 0], "ALLOW", "ioctl TCGETS (isatty)"],
  ["x86_64", X86_64, 16, [3, FS_IOC_SETFLAGS, 0], "EPERM", "ioctl FS_IOC_SETFLAGS"],
  ["x86_64", X86_64, 16, [3, FS_IOC_FSSETXATTR, 0], "EPERM", "ioctl FS_IOC_FSSETXATTR"],
  ["aarch64", AARCH64, 29, [3, FS_IOC_SETFLAGS, 0], "EPERM", "ioctl FS_IOC_SETFLAGS"],
  ["aarch64", AARCH64, 29, [1, TCGETS, 0], "ALLOW", "ioctl TCGETS (isatty)"],
  // The rules that were there before still hold.
  ["x86_64", X86_64, 56, [CLONE_THREAD_FLAGS], "ALLOW", "clone of a thread"],
  ["x86_64", X86_64, 56, [SIGCHLD], "EPERM", "clone of a process"],
  ["x86_64", X86_64, 435, [], "ENOSYS", "clone3"],
  ["x86_64", X86_64, 59, [], "EPERM", "execve"],
  ["x86_64", X86_64, 41, [], "EPERM", "socket"],
  ["x86_64", X86_64, 0x40000000 + 90, [], "EPERM", "x32 chmod"],
  ["x86_64", I386, 15, [], "EPERM", "i386 chmod"],
];

describe.runIf(process.platform === "linux")("metadata and other processes", () => {
  let python: string;

  beforeAll(async () => {
    useTempHome();
    python = (await findPython()).executable;
  });

  it("has a seccomp program that refuses metadata calls, pidfds and prlimit on others, on both machines", async () => {
    const cases = SECCOMP_CASES.map(([machine, arch, nr, args]) => [machine, arch, nr, args]);
    const { stdout } = await run(python, [
      "-c",
      SIMULATE_SECCOMP,
      SANDBOX_DIR,
      JSON.stringify(cases),
    ]);
    const verdicts = JSON.parse(stdout) as string[];
    const got = SECCOMP_CASES.map(
      ([machine, , , , , what], i) => `${machine} ${what}: ${verdicts[i]}`,
    );
    const wanted = SECCOMP_CASES.map(
      ([machine, , , , verdict, what]) => `${machine} ${what}: ${verdict}`,
    );
    expect(got).toEqual(wanted);
  });

  it("has an audit hook that follows dir_fd and descriptors to where they really point", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-hook-fd-"));
    try {
      const scratch = path.join(root, "scratch");
      const outside = path.join(root, "outside");
      mkdirSync(scratch);
      mkdirSync(outside);
      writeFileSync(path.join(outside, "victim.txt"), "intact\n");
      const script = `
import json, os, resource, shutil, sqlite3, sys
sys.path.insert(0, sys.argv[1])
import hardening, read_rules
scratch, outside = sys.argv[2], sys.argv[3]
os.chdir(scratch)
# Opened before the hook, as code could get them past it (os.open's dir_fd is not audited).
outside_fd = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
victim_fd = os.open(os.path.join(outside, "victim.txt"), os.O_RDWR)
os.makedirs("a/b")
inner_fd = os.open("a", os.O_RDONLY | os.O_DIRECTORY)
hardening.install_audit_hook(scratch, read_rules.ReadRules())
outcomes = {}
def attempt(label, action):
    try:
        action()
        outcomes[label] = "done"
    except PermissionError as exc:
        outcomes[label] = "refused" if str(exc).startswith("sandbox:") else f"PermissionError: {exc}"
    except OSError as exc:
        outcomes[label] = type(exc).__name__
attempt("mkdir through an outside dir_fd", lambda: os.mkdir("planted", dir_fd=outside_fd))
attempt("remove through an outside dir_fd", lambda: os.remove("victim.txt", dir_fd=outside_fd))
attempt("rename into an outside dir_fd", lambda: os.rename("a/b", "moved", dst_dir_fd=outside_fd))
attempt("link from an outside dir_fd", lambda: os.link("victim.txt", "stolen", src_dir_fd=outside_fd))
attempt("symlink through an outside dir_fd", lambda: os.symlink("/etc", "planted-link", dir_fd=outside_fd))
attempt("truncate an outside descriptor", lambda: os.truncate(victim_fd, 0))
class Descriptor(int):
    pass
attempt("rmtree with an int subclass as dir_fd", lambda: shutil.rmtree("victim.txt", dir_fd=Descriptor(outside_fd)))
attempt("list an outside descriptor", lambda: os.listdir(outside_fd))
attempt("mkdir through a scratch dir_fd", lambda: os.mkdir("made", dir_fd=inner_fd))
attempt("rmdir through a scratch dir_fd", lambda: os.rmdir("made", dir_fd=inner_fd))
attempt("list a scratch descriptor", lambda: os.listdir(inner_fd))
attempt("rmtree in scratch", lambda: shutil.rmtree("a"))
attempt("chmod in scratch", lambda: os.chmod(".", 0o700))
attempt("utime in scratch", lambda: os.utime("."))
attempt("copy with its mode in scratch", lambda: (open("f", "w").close(), shutil.copy("f", "g")))
attempt("copyfile in scratch", lambda: shutil.copyfile("f", "h"))
attempt("prlimit of this process", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE))
attempt("prlimit of the parent", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE))
attempt("sqlite3 in memory", lambda: sqlite3.connect(":memory:"))
print(json.dumps(outcomes))
`;
      const { stdout } = await run(python, ["-c", script, SANDBOX_DIR, scratch, outside]);
      expect(JSON.parse(stdout)).toEqual({
        "mkdir through an outside dir_fd": "refused",
        "remove through an outside dir_fd": "refused",
        "rename into an outside dir_fd": "refused",
        "link from an outside dir_fd": "refused",
        "symlink through an outside dir_fd": "refused",
        "truncate an outside descriptor": "refused",
        "rmtree with an int subclass as dir_fd": "refused",
        "list an outside descriptor": "refused",
        "mkdir through a scratch dir_fd": "done",
        "rmdir through a scratch dir_fd": "done",
        "list a scratch descriptor": "done",
        "rmtree in scratch": "done",
        "chmod in scratch": "refused",
        "utime in scratch": "refused",
        "copy with its mode in scratch": "refused",
        "copyfile in scratch": "done",
        "prlimit of this process": "done",
        "prlimit of the parent": "refused",
        "sqlite3 in memory": "refused",
      });
      expect(readdirSync(outside)).toEqual(["victim.txt"]);
      expect(readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("intact\n");
      expect(readdirSync(scratch).sort()).toEqual(["f", "g", "h"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  describe("against a pool", () => {
    let sandbox: LocalSandbox;
    let scratchRoot: string;
    let privateFile: string;
    let tmpFile: string;
    let own: TableRef;

    beforeAll(async () => {
      scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-metadata-root-"));
      privateFile = path.join(os.tmpdir(), `tableminds-metadata-private-${process.pid}.txt`);
      tmpFile = path.join(os.tmpdir(), `tableminds-metadata-tmp-${process.pid}.db`);
      writeFileSync(privateFile, "private\n", { mode: 0o600 });
      const stored = await putArtifact("x\n1\n2\n3\n", "csv");
      own = { id: "table:own", name: "own", ...stored, rows: 3, columns: [] };
      sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot });
    });

    afterAll(async () => {
      await sandbox?.close();
      rmSync(scratchRoot, { recursive: true, force: true });
      rmSync(privateFile, { force: true });
      rmSync(tmpFile, { force: true });
    });

    function corpus(file: string): string {
      return readFileSync(path.join(CORPUS, file), "utf8")
        .replaceAll("{{PRIVATE_FILE}}", privateFile)
        .replaceAll("{{TMP_FILE}}", tmpFile)
        .replaceAll("{{OWN_FILE}}", path.basename(own.uri));
    }

    async function xattrsOf(file: string): Promise<string[]> {
      const script = "import json, os, sys; print(json.dumps(os.listxattr(sys.argv[1])))";
      const { stdout } = await run(python, ["-c", script, file]);
      return JSON.parse(stdout) as string[];
    }

    it("reports the new protections as holding where seccomp does", async () => {
      const { protections } = await sandbox.info();
      expect(protections.hookResolvesDescriptors).toBe(true);
      if (protections.seccomp) {
        expect(protections.kernelMetadataConfinement).toBe(true);
        expect(protections.kernelProcessConfinement).toBe(true);
      }
    });

    it("leaves a private file's mode and times as they were (chmod and utime through dir_fd)", async () => {
      const before = statSync(privateFile);
      const result = await sandbox.execute({ code: corpus("chmod-dir-fd.py"), tables: [] });
      expect(result.error?.type).toBe("PermissionError");
      const after = statSync(privateFile);
      expect((after.mode & 0o777).toString(8)).toBe("600");
      expect(after.mtimeMs).toBe(before.mtimeMs);
    });

    it("leaves the artifact store's file as it was (fchmod, utime, setxattr on the run's table)", async () => {
      const before = statSync(own.uri);
      for (const file of ["fchmod-own-table.py", "utime-own-table.py", "setxattr-own-table.py"]) {
        const result = await sandbox.execute({ code: corpus(file), tables: [own] });
        expect(result.error?.type, file).toBe("PermissionError");
        expect(result.stdout, file).not.toContain("changed");
      }
      const after = statSync(own.uri);
      expect(after.mode).toBe(before.mode);
      expect(after.mtimeMs).toBe(before.mtimeMs);
      expect(await xattrsOf(own.uri)).toEqual([]);
      expect(readFileSync(own.uri, "utf8")).toBe("x\n1\n2\n3\n");
    });

    it("keeps the interpreter's limits out of reach, and the interpreter alive", async () => {
      const interpreters = sandbox.interpreterPids;
      const result = await sandbox.execute({ code: corpus("prlimit-interpreter.py"), tables: [] });
      expect(result.error?.type).toBe("PermissionError");
      // A CPU limit below what the interpreter has used would kill it at the next tick.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(sandbox.interpreterPids).toEqual(interpreters);
    });

    it("creates no file through SQLite's ATTACH", async () => {
      const result = await sandbox.execute({ code: corpus("sqlite-attach.py"), tables: [] });
      expect(result.error?.message).toMatch(/sqlite3 is not allowed/);
      expect(() => statSync(tmpFile)).toThrow();
    });
  });
});
