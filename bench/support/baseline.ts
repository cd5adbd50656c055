import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/*
 * Another commit of this repository, beside this tree, for benchmarks that set an earlier
 * engine's figures next to the current one's in one run.
 */

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const TSX = path.join(ROOT, "node_modules/.bin/tsx");

export function git(args: string[], cwd = ROOT): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    .toString()
    .trim();
}

/**
 * A worktree of `commit` in the temp directory (reused while it is still at that commit), with
 * this tree's node_modules linked and the given files of this tree copied in: the scripts that
 * drive the older engine through APIs both versions have.
 */
export function baselineWorktree(commit: string, copied: readonly string[]): string {
  const sha = git(["rev-parse", `${commit}^{commit}`]);
  let dir = path.join(os.tmpdir(), `tableminds-checker-${sha.slice(0, 12)}`);
  let reuse = false;
  if (existsSync(dir)) {
    try {
      reuse = git(["rev-parse", "HEAD"], dir) === sha;
    } catch {
      reuse = false;
    }
    if (!reuse) dir = mkdtempSync(`${dir}-`);
  }
  if (!reuse) {
    git(["worktree", "prune"]);
    git(["worktree", "add", "--detach", "--force", dir, sha]);
  }
  const modules = path.join(dir, "node_modules");
  if (!existsSync(modules)) symlinkSync(path.join(ROOT, "node_modules"), modules, "dir");
  for (const file of copied) {
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    copyFileSync(path.join(ROOT, file), path.join(dir, file));
  }
  return dir;
}
