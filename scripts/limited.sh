# Sourced by the setup scripts: `limited CMD...` runs a command with a time limit when
# coreutils' timeout is available.
PROBE_SECONDS=30

limited() {
  if command -v timeout >/dev/null 2>&1; then
    timeout "$PROBE_SECONDS" "$@"
  else
    "$@"
  fi
}
