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
