# bench/lib.sh — shell helpers the load scripts under bench/ source.

# wait_http PORT [TRIES] waits up to TRIES × 0.1 s (default 300: 30 s) until something answers
# HTTP on 127.0.0.1:PORT (any status).
wait_http() {
  for _ in $(seq "${2:-300}"); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz" || true)" != 000 ] && return 0
    sleep 0.1
  done
  echo "nothing answers on port $1" >&2
  return 1
}

# scratch_dir (bash) sets work to a new temporary directory and pids to an empty array; at exit
# every process whose id the script appended to pids is killed and waited for, and the directory
# removed.
scratch_dir() {
  work="$(mktemp -d)"
  pids=()
  trap scratch_cleanup EXIT
}

# scratch_cleanup is scratch_dir's exit trap.
scratch_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  cd / && rm -rf "$work"
}
