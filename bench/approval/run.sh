#!/usr/bin/env bash
# bench/approval/run.sh — issue #23's throughput target on the shipped binary: start → approve →
# end of a three-node flow, ≥ 300 complete instances/s on PostgreSQL and ≥ 150 on SQLite (2 cores).
#
# It builds `svc`, and per database starts `svc serve` on the shipped configs/application.toml in a
# scratch directory (built-in user store with argon2id, default logging to a file, approval events
# through the outbox), creates the users with `svc user add`, and runs bench/approval/load: C
# workers, each logged in as the applicant and as its own approver, loop start (as the applicant)
# → find_pending_tasks → process_task approve (as the approver), every call a real /api request
# with a real login token. The bare net/http handler of bench/api/bare is measured in the same run
# (wrk, same connection count) as the machine's reference.
#
#   eval "$(scripts/services.sh)"; bench/approval/run.sh      # SQLite, then PostgreSQL and MariaDB
#   C=32 D=30s bench/approval/run.sh                           # more workers, a longer window
#   DBS=postgres bench/approval/run.sh                         # one database (sqlite postgres mariadb)
#   SVC_BIN=.cache/bin/svc bench/approval/run.sh               # an already built binary (bench/run.sh)
#
# PostgreSQL runs in a scratch database created on $SVC_TEST_POSTGRES_DSN's server, MariaDB in one
# on $SVC_TEST_MYSQL_DSN's; both are dropped afterwards. Without those variables only SQLite runs.
# Only what a load test cannot avoid differs from the shipped configuration, through the
# environment: the port, the database, and the per-client rate limits (login, and the engine's 100
# requests per 5 minutes would answer 429 after a moment of one load generator).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
C="${C:-16}"
D="${D:-20s}"
DBS=" ${DBS:-sqlite postgres mariadb} "
SVC_PORT=18095
BARE_PORT=18096
PASSWORD="bench-Password-1"
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/services.sh (it installs Debian's wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
dbs_to_drop=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for d in "${dbs_to_drop[@]}"; do eval "$d" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${SVC_BIN:-}" ]; then cp "$SVC_BIN" "$work/svc"; else go build -o "$work/svc" ./cmd/svc; fi
go build -o "$work/bare" ./bench/api/bare
go build -o "$work/load" ./bench/approval/load
# The applicant and the approvers hold only what the flow needs; bench-admin designs the flows.
sed 's/^admin = \["\*"\]$/&\nstaff = ["approval.instance.start", "approval.task.process"]/' \
  configs/application.toml >"$work/application.toml"
grep -q '^staff = ' "$work/application.toml" || { echo "could not add the staff role to the config" >&2; exit 1; }
export SVC_APP_PORT="$SVC_PORT" SVC_SECURITY_LOGIN_RATE_LIMIT=1000000000 SVC_API_RATE_LIMIT_MAX=1000000000

. "$ROOT/bench/lib.sh"

"$work/bare" -addr "127.0.0.1:$BARE_PORT" &
pids+=("$!")
wait_http "$BARE_PORT"

# run NAME: users, serve, load, stop — on the data source the SVC_DATA_SOURCES_PRIMARY_* variables
# name.
run() {
  local dir="$work/$1"
  mkdir -p "$dir"
  cp "$work/application.toml" "$dir/"
  (
    cd "$dir"
    echo "$PASSWORD" | "$work/svc" --config application.toml user add bench-admin --roles admin --password-stdin >/dev/null
    echo "$PASSWORD" | "$work/svc" --config application.toml user add bench-app --roles staff --password-stdin >/dev/null
    for ((k = 1; k <= C; k++)); do
      echo "$PASSWORD" | "$work/svc" --config application.toml user add "bench-u$k" --roles staff --password-stdin >/dev/null
    done
  )
  (cd "$dir" && exec "$work/svc" --config application.toml serve 2>"$dir/svc.log" >/dev/null) &
  local svc_pid=$!
  pids+=("$svc_pid")
  wait_http "$SVC_PORT" || { tail -n 20 "$dir/svc.log" >&2; exit 1; }
  local bare
  bare="$(TOKEN=x wrk -t2 -c"$C" -d5s --latency -s "$ROOT/bench/real/api.lua" "http://127.0.0.1:$BARE_PORT" | grep RESULT)"
  echo "$1: load before: $(uptime)"
  echo "$1: bare      $bare"
  local result
  result="$("$work/load" -url "http://127.0.0.1:$SVC_PORT" -password "$PASSWORD" -c "$C" -d "$D")" ||
    { tail -n 20 "$dir/svc.log" >&2; exit 1; }
  echo "$1: approval  $result"
  kill "$svc_pid"
  wait "$svc_pid" 2>/dev/null || true
}

if [[ "$DBS" == *" sqlite "* ]]; then
  SVC_DATA_SOURCES_PRIMARY_TYPE=sqlite SVC_DATA_SOURCES_PRIMARY_PATH=./data/svc.db run sqlite
fi

name="svc_apvbench_$$"
if [ -n "${SVC_TEST_POSTGRES_DSN:-}" ] && [[ "$DBS" == *" postgres "* ]]; then
  # postgres://user[:password]@host[:port]/database?options
  re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/?]+)(:([0-9]+))?/'
  [[ "$SVC_TEST_POSTGRES_DSN" =~ $re ]] || { echo "SVC_TEST_POSTGRES_DSN is not a postgres:// URL" >&2; exit 1; }
  pg_user="${BASH_REMATCH[2]}" pg_password="${BASH_REMATCH[4]}" pg_host="${BASH_REMATCH[5]}" pg_port="${BASH_REMATCH[7]:-5432}"
  psql -q "$SVC_TEST_POSTGRES_DSN" -c "CREATE DATABASE $name"
  dbs_to_drop+=("psql -q '$SVC_TEST_POSTGRES_DSN' -c 'DROP DATABASE IF EXISTS $name WITH (FORCE)'")
  SVC_DATA_SOURCES_PRIMARY_TYPE=postgres SVC_DATA_SOURCES_PRIMARY_HOST="$pg_host" SVC_DATA_SOURCES_PRIMARY_PORT="$pg_port" \
    SVC_DATA_SOURCES_PRIMARY_USER="$pg_user" SVC_DATA_SOURCES_PRIMARY_PASSWORD="$pg_password" \
    SVC_DATA_SOURCES_PRIMARY_DATABASE="$name" run postgres
fi
if [ -n "${SVC_TEST_MYSQL_DSN:-}" ] && [[ "$DBS" == *" mariadb "* ]]; then
  # user[:password]@tcp(host[:port])/database?options
  re='^([^:@]+)(:([^@]*))?@tcp\(([^:)]+)(:([0-9]+))?\)/'
  [[ "$SVC_TEST_MYSQL_DSN" =~ $re ]] || { echo "SVC_TEST_MYSQL_DSN is not a user@tcp(host:port)/db DSN" >&2; exit 1; }
  my_user="${BASH_REMATCH[1]}" my_password="${BASH_REMATCH[3]}" my_host="${BASH_REMATCH[4]}" my_port="${BASH_REMATCH[6]:-3306}"
  my=(mysql -h "$my_host" -P "$my_port" -u "$my_user")
  [ -n "$my_password" ] && my+=(-p"$my_password")
  "${my[@]}" -e "CREATE DATABASE $name"
  dbs_to_drop+=("${my[*]} -e 'DROP DATABASE IF EXISTS $name'")
  SVC_DATA_SOURCES_PRIMARY_TYPE=mysql SVC_DATA_SOURCES_PRIMARY_HOST="$my_host" SVC_DATA_SOURCES_PRIMARY_PORT="$my_port" \
    SVC_DATA_SOURCES_PRIMARY_USER="$my_user" SVC_DATA_SOURCES_PRIMARY_PASSWORD="$my_password" \
    SVC_DATA_SOURCES_PRIMARY_DATABASE="$name" run mariadb
fi
