#!/usr/bin/env bash
# The first step of `npm test`: what answering needs (scripts/setup.sh), then what only the
# tests need: the reference implementations the scorer and reward tests compare with, and the
# services of the scaled route (scripts/setup-services.sh). A failure of the latter two only
# warns: the tests that need them then fail and say why. Safe to run again.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

bash scripts/setup.sh || exit $?

# shellcheck source=scripts/root-prefix.sh
source "$ROOT/scripts/root-prefix.sh"

# shellcheck source=scripts/limited.sh
source "$(dirname "${BASH_SOURCE[0]}")/limited.sh"

# The scorer tests compare our ROUGE-L with the `rouge-score` package itself, and the reward
# tests our BLEU with NLTK's (pinned: training/rewards/bleu.ts follows that release). They go
# into a virtualenv inside node_modules (git-ignored), made from the first python3 that can make
# one (Debian's needs python3-venv). A failure only warns: those tests then fail and say why.
# The test of the generated verl reward module reads verl's own source (the reward manager that
# calls it, the registry, the config); verl comes without its dependencies (torch, ray, ...).
REFERENCE_VENV="node_modules/.cache/tableminds/reference-venv" # tests/support/reference-python.ts
REFERENCE_PACKAGE="rouge-score==0.1.2"
REFERENCE_NLTK="nltk==3.9.1" # tests/support/nltk-reference.ts
REFERENCE_VERL="verl==0.9.1" # tests/support/verl-reference.ts
REFERENCE_PROBE="import importlib.metadata as m, rouge_score.rouge_scorer, nltk.translate.bleu_score, nltk; assert nltk.__version__ == '${REFERENCE_NLTK#nltk==}'; assert m.version('verl') == '${REFERENCE_VERL#verl==}'"

ensure_reference_python() {
  local root venv python base prefix
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/$REFERENCE_VENV"
  python="$venv/bin/python"
  if [[ -x "$python" ]] && limited "$python" -c "$REFERENCE_PROBE" 2>/dev/null; then
    return 0
  fi
  echo "tableminds: installing $REFERENCE_PACKAGE, $REFERENCE_NLTK and $REFERENCE_VERL into $REFERENCE_VENV (references for the scorer tests)..."
  # A venv that only lacks a package (or has another NLTK) is topped up, not rebuilt.
  if [[ -x "$python" ]] &&
    "$python" -m pip install --quiet --disable-pip-version-check "$REFERENCE_PACKAGE" "$REFERENCE_NLTK" >/dev/null 2>&1 &&
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps "$REFERENCE_VERL" >/dev/null 2>&1 &&
    limited "$python" -c "$REFERENCE_PROBE" 2>/dev/null; then
    return 0
  fi
  rm -rf "$venv"
  for base in python3 /usr/bin/python3; do
    command -v "$base" >/dev/null 2>&1 || continue
    limited "$base" -m venv "$venv" >/dev/null 2>&1 && break
    rm -rf "$venv"
  done
  if [[ ! -x "$python" ]] && command -v apt-get >/dev/null 2>&1 && prefix=$(root_prefix); then
    { $prefix env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends python3-venv >/dev/null 2>&1 ||
      { $prefix apt-get update -qq && $prefix env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends python3-venv >/dev/null; }; } &&
      limited /usr/bin/python3 -m venv "$venv" >/dev/null 2>&1 || rm -rf "$venv"
  fi
  if [[ -x "$python" ]] &&
    "$python" -m pip install --quiet --disable-pip-version-check "$REFERENCE_PACKAGE" "$REFERENCE_NLTK" >/dev/null &&
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps "$REFERENCE_VERL" >/dev/null &&
    limited "$python" -c "$REFERENCE_PROBE" 2>/dev/null; then
    return 0
  fi
  rm -rf "$venv"
  echo "tableminds: warning: could not install $REFERENCE_PACKAGE, $REFERENCE_NLTK and $REFERENCE_VERL from PyPI into $REFERENCE_VENV;" >&2
  echo "  the scorer tests that compare with it will fail until \`npm run setup\` succeeds." >&2
}

ensure_reference_python

# The page's browser tests (tests/e2e/page.test.ts) drive Debian's chromium with playwright-core,
# whose own browser download cannot run here. A failure only warns: those tests then say why.
ensure_chromium() {
  local prefix
  for browser in chromium chromium-browser; do
    command -v "$browser" >/dev/null 2>&1 && return 0
  done
  echo "tableminds: installing chromium (the page's browser tests)..."
  if command -v apt-get >/dev/null 2>&1 && prefix=$(root_prefix); then
    { $prefix env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { $prefix apt-get update -qq && $prefix env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } && return 0
  fi
  echo "tableminds: warning: could not install chromium; the page's browser tests will fail until it is there (or TABLEMINDS_CHROMIUM names one)" >&2
}
ensure_chromium
# PostgreSQL, Redis and SeaweedFS for the scaled route's tests (warns on failure).
bash scripts/setup-services.sh
