import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// .ci/run runs this after `npm install`: a lock file the install rewrites must fail CI.
const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/check-clean-tree.sh");
const root = mkdtempSync(path.join(tmpdir(), "tableminds-clean-tree-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function repo(): string {
  const dir = mkdtempSync(path.join(root, "repo-"));
  mkdirSync(path.join(dir, "scripts"));
  copyFileSync(SCRIPT, path.join(dir, "scripts", "check-clean-tree.sh"));
  writeFileSync(path.join(dir, "package-lock.json"), '{\n  "lockfileVersion": 3\n}\n');
  writeFileSync(path.join(dir, ".gitignore"), "node_modules/\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  git("init", "-q");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "lock");
  return dir;
}

const check = (dir: string) =>
  spawnSync("bash", ["scripts/check-clean-tree.sh", "npm install"], { cwd: dir, encoding: "utf8" });

describe("scripts/check-clean-tree.sh", () => {
  it("passes when the install left the tree as committed (ignored files aside)", () => {
    const dir = repo();
    mkdirSync(path.join(dir, "node_modules"));
    writeFileSync(path.join(dir, "node_modules", "x.js"), "");
    const result = check(dir);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("npm install left the tree as committed");
  });

  it("fails on a rewritten lock file, saying to regenerate it", () => {
    const dir = repo();
    writeFileSync(path.join(dir, "package-lock.json"), '{\n  "lockfileVersion": 3,\n  "x": 1\n}\n');
    const result = check(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("npm install changed the tree:");
    expect(result.stderr).toContain(" M package-lock.json");
    expect(result.stderr).toContain("package-lock.json is not what npm install resolves");
  });

  it("fails on a new file the install left", () => {
    const dir = repo();
    writeFileSync(path.join(dir, "stray.txt"), "");
    const result = check(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("?? stray.txt");
  });
});
