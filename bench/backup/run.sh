#!/bin/sh
# Backup speed and /api p99 during a backup (issue #47) on the shipped binary (`svc serve` built
# from ./cmd/svc): a SQLite database of DB_MIB and FILES_MIB of files; `cp -r` of the data
# directory and an unloaded backup (sys/backup create on /api) alternate RUNS times on the same
# disk (DIR); then the p99 of an authenticated /api read at a fixed open-loop RATE (req/s)
# without and during a backup; a closed loop of CLIENTS callers is printed as information. The
# method and why it changed are in main.go's header and docs/performance.md. The issue's scale
# is the default; check `uptime` (load < 1.5) first:
#
#   bench/backup/run.sh                          # 1 GiB database + 4 GiB files, 400 req/s
#   DB_MIB=128 FILES_MIB=512 bench/backup/run.sh # a smaller run on a busy machine
#   SVC_BIN=.cache/bin/svc RATE=300 bench/backup/run.sh
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/backup -db "${DB_MIB:-1024}" -files "${FILES_MIB:-4096}" -file-size "${FILE_MIB:-16}" \
	-rate "${RATE:-400}" -clients "${CLIENTS:-4}" -runs "${RUNS:-3}" ${DIR:+-dir "$DIR"} ${SVC_BIN:+-bin "$SVC_BIN"}
