#!/usr/bin/env bash
# `npm run setup`: what answering a question needs, and nothing the tests alone need
# (scripts/setup-tests.sh adds those). Makes sure the local sandbox has a Python with pandas,
# looking in the same order as sandbox/python.ts (TABLEMINDS_PYTHON, python3,
# /usr/bin/python3, python); when none has pandas, installs Debian's python3-pandas with
# apt-get (as root, or through sudo without a password). Also matplotlib and fonts (charts)
# and the embedded model. Safe to run again; fast when nothing is needed.
set -uo pipefail

# shellcheck source=scripts/limited.sh
source "$(dirname "${BASH_SOURCE[0]}")/limited.sh"

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

ensure_fonts
# Only the CPU build of llama.cpp stays: the embedded model never loads the others.
node "$(dirname "${BASH_SOURCE[0]}")/prune-llama-builds.mjs"
# The embedded local model that answers when no endpoint is configured (warns on failure).
bash "$(dirname "${BASH_SOURCE[0]}")/setup-model.sh"

# The checkout's JavaScript (.build/, about a second): cli/bin.js runs it while it matches the
# sources, so the CLI starts without a TypeScript loader (warns on failure: the sources still run).
if ! node "$(dirname "${BASH_SOURCE[0]}")/build.mjs" --checkout 2>/dev/null; then
  echo "tableminds: warning: the checkout build failed; the CLI runs the sources (a slower start)." >&2
fi

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
