# Sourced by the setup scripts. Root, or password-less sudo, for apt-get; prints the prefix to
# run it with (empty for root) and fails when neither is available.
root_prefix() {
  if [[ "$(id -u)" == "0" ]]; then
    echo ""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "sudo -n"
  else
    return 1
  fi
}
