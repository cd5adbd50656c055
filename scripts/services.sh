#!/usr/bin/env bash
# Starts and stops the services of the scaled route on loopback, each in a folder of its own
# and on free ports, for tests, benchmarks and trying things out:
#
#   scripts/services.sh start postgres|redis|s3 <folder>   prints the settings that reach it
#                                                          (NAME=value lines, also in <folder>/<service>/env)
#   scripts/services.sh stop  postgres|redis|s3 <folder>   stops it (the folder stays)
#   scripts/services.sh restart postgres <folder>          a fast restart (connections dropped)
#   scripts/services.sh outage postgres <folder> <seconds> down that long (refusing), then back
#
# PostgreSQL runs as the `postgres` user when started by root (initdb refuses root), with
# trust authentication on 127.0.0.1 only. Redis keeps its jobs in an append-only file (what
# the queue needs of it: a restart loses at most the last second). SeaweedFS
# (`weed mini`) serves S3 with the access key and secret printed, and a bucket `tableminds`.
# `scripts/setup-services.sh` installs what this needs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WEED="$ROOT/node_modules/.cache/tableminds/services-venv/bin/weed" # scripts/setup-services.sh
S3_KEY="tableminds"
S3_SECRET="tableminds-secret"
S3_BUCKET="tableminds"

die() {
  echo "services: $*" >&2
  exit 1
}

usage() { die "usage: services.sh start|stop postgres|redis|s3 <folder>, restart postgres <folder>, or outage postgres <folder> <seconds>"; }

port_free() {
  python3 - "$@" <<'EOF'
import socket, sys
for port in map(int, sys.argv[1:]):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            sys.exit(1)
EOF
}

# A base port with `count` free ports from it, and the same again 10000 higher when `grpc` is
# set (SeaweedFS's gRPC ports; the issue caps every port at 55535).
free_ports() {
  local count="$1" grpc="${2:-}" base ports
  for _ in $(seq 1 50); do
    base=$((20000 + RANDOM % 25000))
    ports=$(seq "$base" $((base + count - 1)))
    [[ -n "$grpc" ]] && ports="$ports $(seq $((base + 10000)) $((base + 10000 + count - 1)))"
    # shellcheck disable=SC2086
    port_free $ports && { echo "$base"; return 0; }
  done
  die "no free ports on 127.0.0.1"
}

wait_for() {
  local what="$1" log="$2"
  shift 2
  for _ in $(seq 1 150); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  tail -20 "$log" >&2 || true
  die "$what did not start within 30 s (log: $log)"
}

postgres_bin() {
  local bin
  bin=$(compgen -G "/usr/lib/postgresql/*/bin" | sort -V | tail -1) || true
  [[ -n "$bin" && -x "$bin/initdb" ]] || die "no PostgreSQL found (run scripts/setup-services.sh)"
  echo "$bin"
}

as_postgres() {
  if [[ "$(id -u)" == "0" ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  local dir="$1" bin port
  bin=$(postgres_bin)
  port=$(free_ports 1)
  mkdir -p "$dir/postgres"
  chmod 755 "$dir"
  [[ "$(id -u)" == "0" ]] && chown postgres "$dir/postgres"
  as_postgres "$bin/initdb" -D "$dir/postgres/data" -U postgres -A trust -E UTF8 --no-sync \
    >"$dir/postgres/initdb.log" 2>&1 || { tail -20 "$dir/postgres/initdb.log" >&2; die "initdb failed"; }
  echo "$port" >"$dir/postgres/port"
  run_postgres "$dir"
  echo "TABLEMINDS_DATABASE_URL=postgres://postgres@127.0.0.1:$port/postgres" | tee "$dir/postgres/env"
}

run_postgres() {
  local dir="$1" port
  port=$(cat "$dir/postgres/port")
  as_postgres "$(postgres_bin)/pg_ctl" -D "$dir/postgres/data" -l "$dir/postgres/server.log" -w -t 30 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/postgres -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null || { tail -20 "$dir/postgres/server.log" >&2; die "PostgreSQL did not start"; }
}

outage_postgres() {
  local dir="$1" seconds="$2"
  as_postgres "$(postgres_bin)/pg_ctl" -D "$dir/postgres/data" -m fast -w stop >/dev/null
  sleep "$seconds"
  run_postgres "$dir"
}

stop_postgres() {
  local dir="$1"
  [[ -d "$dir/postgres/data" ]] || return 0
  as_postgres "$(postgres_bin)/pg_ctl" -D "$dir/postgres/data" -m immediate -w stop >/dev/null 2>&1 || true
}

restart_postgres() {
  local dir="$1"
  as_postgres "$(postgres_bin)/pg_ctl" -D "$dir/postgres/data" -m fast -w -t 30 restart >/dev/null
}

start_redis() {
  local dir="$1" port
  command -v redis-server >/dev/null 2>&1 || die "no redis-server found (run scripts/setup-services.sh)"
  port=$(free_ports 1)
  mkdir -p "$dir/redis"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --daemonize yes \
    --dir "$dir/redis" --pidfile "$dir/redis/pid" --logfile "$dir/redis/server.log" >/dev/null
  wait_for "Redis" "$dir/redis/server.log" redis-cli -h 127.0.0.1 -p "$port" ping
  echo "TABLEMINDS_QUEUE_URL=redis://127.0.0.1:$port" | tee "$dir/redis/env"
}

stop_pidfile() {
  local file="$1" pid
  [[ -f "$file" ]] || return 0
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

start_s3() {
  local dir="$1" base
  [[ -x "$WEED" ]] || die "no SeaweedFS found at $WEED (run scripts/setup-services.sh)"
  base=$(free_ports 8 grpc)
  mkdir -p "$dir/s3/data"
  AWS_ACCESS_KEY_ID="$S3_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET" S3_BUCKET="$S3_BUCKET" \
    setsid "$WEED" mini -dir="$dir/s3/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -admin.ui=false \
    -master.port="$base" -volume.port=$((base + 1)) -filer.port=$((base + 2)) \
    -s3.port=$((base + 3)) -admin.port=$((base + 4)) -webdav.port=$((base + 5)) \
    -s3.port.iceberg=$((base + 6)) -s3.port.lance=$((base + 7)) \
    -filer.localSocket="$dir/s3/filer.sock" -s3.localSocket="$dir/s3/s3.sock" \
    >"$dir/s3/server.log" 2>&1 </dev/null &
  echo $! >"$dir/s3/pid"
  local endpoint="http://127.0.0.1:$((base + 3))"
  wait_for "SeaweedFS" "$dir/s3/server.log" grep -q "All enabled components are running" "$dir/s3/server.log"
  # The bucket is made once the S3 gateway has its credentials; a HEAD answers 403 or 200 then.
  wait_for "SeaweedFS's S3 gateway" "$dir/s3/server.log" \
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$endpoint/healthz"
  {
    echo "TABLEMINDS_ARTIFACT_STORE=s3://$S3_BUCKET/artifacts"
    echo "AWS_ENDPOINT_URL=$endpoint"
    echo "AWS_ACCESS_KEY_ID=$S3_KEY"
    echo "AWS_SECRET_ACCESS_KEY=$S3_SECRET"
    echo "AWS_REGION=us-east-1"
  } | tee "$dir/s3/env"
}

[[ $# -eq 3 || ( $# -eq 4 && "$1" == "outage" ) ]] || usage
action="$1" service="$2" dir="$3"
case "$action:$service" in
outage:postgres) outage_postgres "$dir" "$4" ;;
start:postgres) start_postgres "$dir" ;;
stop:postgres) stop_postgres "$dir" ;;
restart:postgres) restart_postgres "$dir" ;;
start:redis) start_redis "$dir" ;;
stop:redis) stop_pidfile "$dir/redis/pid" ;;
start:s3) start_s3 "$dir" ;;
stop:s3) stop_pidfile "$dir/s3/pid" ;;
*) usage ;;
esac
