#!/bin/sh
# Backup speed and /api p99 during a backup (issue #47): a SQLite database of DB_MIB and
# FILES_MIB of files, backup vs `cp -r` on the same disk (DIR), and the p99 of an authenticated
# /api call with and without a backup running. The issue's scale is the default:
#
#   bench/backup/run.sh                          # 1 GiB database + 4 GiB files
#   DB_MIB=128 FILES_MIB=512 bench/backup/run.sh # a smaller run on a busy machine
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/backup -db "${DB_MIB:-1024}" -files "${FILES_MIB:-4096}" -file-size "${FILE_MIB:-16}" \
	-clients "${CLIENTS:-4}" ${DIR:+-dir "$DIR"}
