#!/usr/bin/env bash
# Makes sure the local sandbox has a Python with pandas. Looks in the same order as
# tools/sandbox/python.ts (TABLEMINDS_PYTHON, python3, /usr/bin/python3, python);
# when none has pandas, installs Debian's python3-pandas with apt-get (as root, or
# through sudo without a password). Safe to run again; fast when nothing is needed.
set -uo pipefail

PROBE_SECONDS=30

# Runs a command with a time limit when coreutils' timeout is available.
limited() {
  if command -v timeout >/dev/null 2>&1; then
    timeout "$PROBE_SECONDS" "$@"
  else
    "$@"
  fi
}

# Prints "<executable> (Python x.y.z, pandas a.b.c)" when $1 can import pandas.
describe_python() {
  command -v "$1" >/dev/null 2>&1 || return 1
  limited "$1" -c 'import platform, sys, pandas; print(f"{sys.executable} (Python {platform.python_version()}, pandas {pandas.__version__})")' 2>/dev/null
}

# shellcheck source=scripts/root-prefix.sh
source "$(dirname "${BASH_SOURCE[0]}")/root-prefix.sh"

# Scoring TableBench's charts runs matplotlib in the sandbox. Without it, everything else
# works, so a failure here only warns.
ensure_matplotlib() {
  local python="$1"
  limited "$python" -c 'import matplotlib' 2>/dev/null && return 0
  local prefix
  if [[ "$(command -v "$python")" == "/usr/bin/python3" ]] && command -v apt-get >/dev/null 2>&1 &&
    prefix=$(root_prefix); then
    echo "tableminds: installing python3-matplotlib with apt-get (to score charts)..."
    if $prefix env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null 2>&1 ||
      { $prefix apt-get update -qq && $prefix env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null; }; then
      return 0
    fi
  fi
  echo "tableminds: warning: $python cannot import matplotlib; TableBench charts will score 0." >&2
  echo "  Install it (apt-get install python3-matplotlib, or pip install matplotlib)." >&2
}

# The PNG copies of a report's charts are drawn with the system's fonts; DejaVu is what they
# ask for. Without any font, the charts still render, with no text.
ensure_fonts() {
  [[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] && return 0
  local prefix
  if command -v apt-get >/dev/null 2>&1 && prefix=$(root_prefix); then
    echo "tableminds: installing fonts-dejavu-core with apt-get (for report charts)..."
    if $prefix env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends fonts-dejavu-core >/dev/null 2>&1 ||
      { $prefix apt-get update -qq && $prefix env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends fonts-dejavu-core >/dev/null; }; then
      return 0
    fi
  fi
  echo "tableminds: warning: no DejaVu fonts; the PNG charts of reports will have no text." >&2
}

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

ensure_fonts
ensure_reference_python
# Only the CPU build of llama.cpp stays: the embedded model never loads the others.
node "$(dirname "${BASH_SOURCE[0]}")/prune-llama-builds.mjs"
# The embedded local model that answers when no endpoint is configured (warns on failure).
bash "$(dirname "${BASH_SOURCE[0]}")/setup-model.sh"
# PostgreSQL, Redis and SeaweedFS for the scaled route's tests (warns on failure).
bash "$(dirname "${BASH_SOURCE[0]}")/setup-services.sh"

if [[ -n "${TABLEMINDS_PYTHON:-}" ]]; then
  if found=$(describe_python "$TABLEMINDS_PYTHON"); then
    echo "tableminds: sandbox python: $found"
    ensure_matplotlib "$TABLEMINDS_PYTHON"
    exit 0
  fi
  echo "tableminds: TABLEMINDS_PYTHON=$TABLEMINDS_PYTHON cannot import pandas." >&2
  echo "  Install pandas for it ($TABLEMINDS_PYTHON -m pip install pandas)," >&2
  echo "  or unset TABLEMINDS_PYTHON so that setup can use or install the system python." >&2
  exit 1
fi

for candidate in python3 /usr/bin/python3 python; do
  if found=$(describe_python "$candidate"); then
    echo "tableminds: sandbox python: $found"
    ensure_matplotlib "$candidate"
    exit 0
  fi
done

instructions() {
  cat >&2 <<'EOF'
tableminds: no Python with pandas was found, and it could not be installed here.
  Either install Debian/Ubuntu's package as root:
      apt-get update && apt-get install -y python3-pandas
  or point tableminds at any Python that has pandas:
      python3 -m pip install pandas          # in a virtualenv, for example
      export TABLEMINDS_PYTHON=/path/to/that/python
  then run `npm run setup` again.
EOF
}

if ! command -v apt-get >/dev/null 2>&1; then
  instructions
  exit 1
fi

if [[ "$(id -u)" == "0" ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  instructions
  exit 1
fi

echo "tableminds: installing python3-pandas with apt-get (for the local sandbox)..."
if ! ${as_root[@]+"${as_root[@]}"} apt-get update -qq ||
  ! ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends python3-pandas >/dev/null; then
  echo "tableminds: apt-get could not install python3-pandas." >&2
  instructions
  exit 1
fi

if found=$(describe_python /usr/bin/python3); then
  echo "tableminds: sandbox python: $found"
  ensure_matplotlib /usr/bin/python3
  exit 0
fi
echo "tableminds: python3-pandas was installed, but /usr/bin/python3 still cannot import pandas." >&2
instructions
exit 1
