#!/usr/bin/env bash
# Fails, listing what changed, when the git work tree differs from its commit: `.ci/run` runs
# it after `npm install` so that a lock file the install rewrites fails CI, not a new user's
# clone. Usage: bash scripts/check-clean-tree.sh "<what just ran>"
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
what="${1:-the last step}"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-clean-tree: not a git work tree; nothing to check" >&2
  exit 0
fi
changed="$(git status --porcelain --untracked-files=all)"
if [[ -z "$changed" ]]; then
  echo "check-clean-tree: $what left the tree as committed"
  exit 0
fi
echo "check-clean-tree: $what changed the tree:" >&2
echo "$changed" | sed 's/^/  /' >&2
if echo "$changed" | grep -q 'package-lock.json'; then
  git --no-pager diff --stat -- package-lock.json >&2
  echo "  package-lock.json is not what npm install resolves: regenerate it with Node 20's npm," >&2
  echo "  \`npm exec --package=npm@10.8.2 -- npm install\` (npm 11 keeps that lock as it is), and commit it." >&2
fi
exit 1
