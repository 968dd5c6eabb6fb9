#!/usr/bin/env bash
# services.sh makes sure the real services the test suite talks to are
# running on this machine, then prints their settings as `export` lines:
#
#   eval "$(scripts/services.sh)"
#
# It is idempotent: every service is first checked with a real connection and
# only installed (Debian packages), configured or started when that check
# fails, so a second run takes a second or two. Progress goes to stderr; only
# the export lines go to stdout.
#
# With SVC_SERVICES_STARTED=FILE it appends to FILE the name of each service
# that was not answering and that it brought up (postgres, mariadb, redis, s3),
# so the caller can stop exactly those afterwards with
#
#   scripts/services.sh stop NAME...
#
# (scripts/test.sh does, unless SVC_TEST_KEEP_SERVICES=1). Installed packages
# stay installed.
#
# Services: PostgreSQL 127.0.0.1:5432 (trust, database test), MariaDB
# 127.0.0.1:3306 (root without password over TCP, database test), Redis
# 127.0.0.1:6379, and versitygw (S3) on 127.0.0.1:7070, built from the pinned
# tools module in tools/s3. See docs/testing.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="$ROOT/.cache/services"   # logs, pid files, markers, lock
BIN="$ROOT/.cache/bin"
S3_DATA="$ROOT/.cache/s3data"   # kept between runs; delete it for a fresh store

PG_DSN='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
MYSQL_DSN='root@tcp(127.0.0.1:3306)/test?parseTime=true'
REDIS_ADDR='127.0.0.1:6379'
S3_ENDPOINT='127.0.0.1:7070'
# Fixed keys for the throwaway local gateway (not secrets); callers may
# override them when they point at a gateway started with other keys.
S3_ACCESS_KEY="${SVC_TEST_S3_ACCESS_KEY:-svctestaccesskey}"
S3_SECRET_KEY="${SVC_TEST_S3_SECRET_KEY:-svctestsecretkey0123456789}"

# Keep the caller's stdout (fd 3) for the export lines; everything else,
# including apt-get and psql output, goes to stderr.
exec 3>&1 1>&2

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	command -v sudo >/dev/null || die "not root and no sudo: cannot install or start services"
	SUDO=(sudo)
fi

mkdir -p "$STATE" "$BIN"
# One run at a time: two concurrent runs would race to start the same server.
exec 9>"$STATE/lock"
flock -w 600 9 || die "another services.sh run holds $STATE/lock"

# started NAME records that this run brought NAME up (see SVC_SERVICES_STARTED).
started() {
	if [[ -n ${SVC_SERVICES_STARTED:-} ]]; then echo "$1" >>"$SVC_SERVICES_STARTED"; fi
}

# wait_for NAME SECONDS CMD... polls CMD every half second until it succeeds
# or the deadline passes.
wait_for() {
	local name=$1 secs=$2
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.5
	done
	log "$name is ready"
}

# daemon LOGFILE CMD... starts CMD detached from this script: new session, no
# stdin, output to LOGFILE and fd 3 closed, so that `$(services.sh)` does not
# wait for it.
daemon() {
	local logfile=$1
	shift
	setsid nohup "$@" </dev/null >>"$logfile" 2>&1 3>&- 9>&- &
	echo $!
}

APT_UPDATED=0
apt_install() {
	command -v apt-get >/dev/null || return 1
	if ((APT_UPDATED == 0)); then
		log "apt-get update"
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q 3>&- 9>&- || return 1
		APT_UPDATED=1
	fi
	log "apt-get install -y $*"
	# Package scripts may start servers: they must not inherit fd 3 (the
	# caller's pipe, which would never close) or fd 9 (the lock).
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" 3>&- 9>&-
}

# ---- PostgreSQL -------------------------------------------------------------

pg_tcp() { psql -h 127.0.0.1 -p 5432 -U postgres -w -d postgres -tAc "$1"; }

# shellcheck disable=SC2012 # cluster directories are plain version numbers
pg_cluster_version() { ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1; }

pg_trust_localhost() {
	local ver hba
	ver=$(pg_cluster_version)
	hba="/etc/postgresql/$ver/main/pg_hba.conf"
	[[ -f $hba ]] || die "no $hba"
	# The first host rule that covers 127.0.0.1 decides; it must be trust.
	local first
	first=$(awk '$1 ~ /^host/ && ($4 == "127.0.0.1/32" || $4 == "all" || $4 == "0.0.0.0/0") { print $5; exit }' "$hba")
	if [[ $first != trust ]]; then
		log "pg_hba.conf: trust for 127.0.0.1/32"
		# The first matching line wins, so the trust line goes on top.
		"${SUDO[@]}" sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
		"${SUDO[@]}" pg_ctlcluster --skip-systemctl-redirect "$ver" main reload 3>&- 9>&- || true
	fi
}

ensure_postgres() {
	if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
		if ! command -v pg_ctlcluster >/dev/null || [[ -z $(pg_cluster_version) ]]; then
			apt_install postgresql || die "cannot install postgresql"
		fi
		local ver
		ver=$(pg_cluster_version)
		[[ -n $ver ]] || die "no PostgreSQL cluster under /etc/postgresql"
		pg_trust_localhost
		if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
			log "starting PostgreSQL $ver"
			"${SUDO[@]}" install -d -o postgres -g postgres -m 2775 /var/run/postgresql
			"${SUDO[@]}" pg_ctlcluster --skip-systemctl-redirect "$ver" main start 3>&- 9>&- ||
				log "pg_ctlcluster start failed; waiting anyway"
		fi
		wait_for PostgreSQL 60 pg_isready -h 127.0.0.1 -p 5432 ||
			die "PostgreSQL did not become ready on 127.0.0.1:5432 (see /var/log/postgresql/)"
		started postgres
	fi
	if ! pg_tcp 'select 1' >/dev/null 2>&1; then
		pg_trust_localhost
		wait_for "PostgreSQL trust login" 10 pg_tcp 'select 1' ||
			die "postgres@127.0.0.1 cannot log in without a password"
	fi
	if [[ $(pg_tcp "select 1 from pg_database where datname = 'test'") != 1 ]]; then
		log "PostgreSQL: create database test"
		pg_tcp 'create database test' >/dev/null
	fi
	log "PostgreSQL ok ($PG_DSN)"
}

# ---- MariaDB ----------------------------------------------------------------

my_tcp() { mariadb --connect-timeout=3 -h 127.0.0.1 -P 3306 -uroot -e "$1"; }
my_sock() { "${SUDO[@]}" mariadb --connect-timeout=3 -uroot -e "$1"; }
my_alive() { my_tcp 'select 1' || my_sock 'select 1'; }

ensure_mariadb() {
	if ! my_tcp 'select 1' >/dev/null 2>&1; then
		if ! my_sock 'select 1' >/dev/null 2>&1; then
			if [[ ! -x /usr/sbin/mariadbd ]]; then
				apt_install mariadb-server mariadb-client || die "cannot install mariadb-server"
			fi
			if ! my_alive >/dev/null 2>&1; then
				log "starting MariaDB"
				"${SUDO[@]}" install -d -o mysql -g mysql -m 0755 /run/mysqld
				daemon "$STATE/mariadbd.log" "${SUDO[@]}" /usr/sbin/mariadbd --user=mysql >/dev/null
			fi
			wait_for MariaDB 60 my_alive ||
				die "MariaDB did not start (see $STATE/mariadbd.log and /var/log/mysql/)"
			started mariadb
		fi
		if ! my_tcp 'select 1' >/dev/null 2>&1; then
			# Debian's root@localhost accepts only the unix socket. Allow an
			# empty password over TCP; root@127.0.0.1 covers servers that run
			# with skip-name-resolve, where 127.0.0.1 does not match localhost.
			log "MariaDB: allow root without password over TCP"
			my_sock "ALTER USER root@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;
				CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');
				GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;
				FLUSH PRIVILEGES;"
			wait_for "MariaDB over TCP" 10 my_tcp 'select 1' ||
				die "root@127.0.0.1:3306 cannot log in (is bind-address or skip-networking set?)"
		fi
	fi
	my_tcp 'create database if not exists test'
	log "MariaDB ok ($MYSQL_DSN)"
}

# ---- Redis ------------------------------------------------------------------

redis_ping() { [[ $(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null) == PONG ]]; }

ensure_redis() {
	if ! redis_ping; then
		if ! command -v redis-server >/dev/null; then
			apt_install redis-server redis-tools || die "cannot install redis-server"
		fi
		if ! redis_ping; then
			log "starting Redis"
			"${SUDO[@]}" install -d -m 0755 /var/lib/redis /var/log/redis
			# Nothing on disk: tests must not depend on earlier runs.
			"${SUDO[@]}" redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 \
				--save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log \
				</dev/null 3>&- 9>&- || die "redis-server failed to start"
		fi
		wait_for Redis 20 redis_ping || die "Redis did not answer PING (see /var/log/redis/ci.log)"
		started redis
	fi
	log "Redis ok ($REDIS_ADDR)"
}

# ---- S3 (versitygw) ---------------------------------------------------------

# The binary is rebuilt only when the tools module or the Go version changes;
# with a warm build cache that takes seconds, cold about three minutes.
build_versitygw() {
	local stamp want
	want=$(cat "$ROOT/tools/s3/go.mod" "$ROOT/tools/s3/go.sum" <(go version) | sha256sum | cut -d' ' -f1)
	stamp="$BIN/versitygw.stamp"
	if [[ -x $BIN/versitygw && -f $stamp && $(<"$stamp") == "$want" ]]; then
		return
	fi
	log "building versitygw from tools/s3 (about 3 minutes with a cold build cache)"
	local start=$SECONDS
	(cd "$ROOT/tools/s3" && GOWORK=off go build -o "$BIN/versitygw.tmp" github.com/versity/versitygw/cmd/versitygw) ||
		die "versitygw build failed"
	mv "$BIN/versitygw.tmp" "$BIN/versitygw"
	echo "$want" >"$stamp"
	log "built versitygw in $((SECONDS - start))s"
}

# s3_answers: anything speaking HTTP on the port.
s3_answers() {
	[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$S3_ENDPOINT/" || true) != 000 ]]
}

# s3_signed_ok: a SigV4-signed ListBuckets with our keys succeeds.
s3_signed_ok() {
	# S3 wants the payload hash header; this one is SHA-256 of the empty body.
	curl -sf -o /dev/null --max-time 5 --aws-sigv4 'aws:amz:us-east-1:s3' \
		-H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
		--user "$S3_ACCESS_KEY:$S3_SECRET_KEY" "http://$S3_ENDPOINT/"
}

ensure_s3() {
	# Built even when a server already answers: the fault-injection run (bench/faults) starts
	# its own versitygw from $BIN (a no-op when the pinned build is there).
	build_versitygw
	if ! s3_answers; then
		mkdir -p "$S3_DATA"
		log "starting versitygw on $S3_ENDPOINT (data in ${S3_DATA#"$ROOT"/})"
		ROOT_ACCESS_KEY="$S3_ACCESS_KEY" ROOT_SECRET_KEY="$S3_SECRET_KEY" \
			daemon "$STATE/versitygw.log" "$BIN/versitygw" --port "$S3_ENDPOINT" --quiet \
			posix "$S3_DATA" >"$STATE/versitygw.pid"
		wait_for versitygw 30 s3_answers ||
			die "versitygw did not answer on $S3_ENDPOINT (see $STATE/versitygw.log)"
		started s3
	fi
	s3_signed_ok ||
		die "the S3 server on $S3_ENDPOINT rejects the test keys (started with other keys? set SVC_TEST_S3_ACCESS_KEY/SVC_TEST_S3_SECRET_KEY)"
	log "S3 ok (http://$S3_ENDPOINT)"
}

# ---- load tool --------------------------------------------------------------

ensure_wrk() {
	command -v wrk >/dev/null && return
	# Remember a failed install so later runs stay fast; delete the marker to retry.
	if [[ ! -f $STATE/wrk-unavailable ]]; then
		apt_install wrk && return
		touch "$STATE/wrk-unavailable"
	fi
	log "note: wrk is not available; HTTP load benchmarks will be skipped (rm $STATE/wrk-unavailable to retry the install)"
}

# ---- stop -------------------------------------------------------------------

# stop_service NAME stops a service this script starts, however it was started.
stop_service() {
	case $1 in
	postgres)
		local ver
		ver=$(pg_cluster_version)
		[[ -n $ver ]] && "${SUDO[@]}" pg_ctlcluster --skip-systemctl-redirect "$ver" main stop 3>&- 9>&- ;;
	mariadb) my_tcp 'SHUTDOWN' || my_sock 'SHUTDOWN' ;;
	redis) redis-cli -h 127.0.0.1 -p 6379 shutdown nosave ;;
	s3)
		[[ -f $STATE/versitygw.pid ]] && kill "$(<"$STATE/versitygw.pid")" && rm -f "$STATE/versitygw.pid" ;;
	*) return 2 ;;
	esac
}

if [[ ${1:-} == stop ]]; then
	shift
	for name in "$@"; do
		if stop_service "$name" >/dev/null 2>&1; then log "stopped $name"; else log "could not stop $name (postgres, mariadb, redis or s3)"; fi
	done
	exit 0
fi

start=$SECONDS
ensure_postgres
ensure_mariadb
ensure_redis
ensure_s3
ensure_wrk
log "all services ready in $((SECONDS - start))s"

cat >&3 <<EOF
export SVC_TEST_POSTGRES_DSN='$PG_DSN'
export SVC_TEST_MYSQL_DSN='$MYSQL_DSN'
export SVC_TEST_REDIS_ADDR='$REDIS_ADDR'
export SVC_TEST_S3_ENDPOINT='$S3_ENDPOINT'
export SVC_TEST_S3_ACCESS_KEY='$S3_ACCESS_KEY'
export SVC_TEST_S3_SECRET_KEY='$S3_SECRET_KEY'
EOF
