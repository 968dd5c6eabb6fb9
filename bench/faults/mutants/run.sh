#!/usr/bin/env bash
# Mutation run of the fault harness (issue #45 item 6): each known break below is applied, one
# at a time, to a scratch copy of one source file (go build -overlay: the tree is never
# touched), and a short seeded fault run goes against it (the harness builds svc and its
# upgraded build with that overlay, -overlay). A break the
# run does not catch "survives" and fails this script: it is killed only when the check named
# for it in the table fails (other checks failing alone do not count).
#
#   bench/faults/mutants/run.sh                      # every mutant, PostgreSQL, 150 s each
#   bench/faults/mutants/run.sh -d 3m -db mysql inbox-rehandles decide-unlocked
#
# Each mutant is a sed script in this directory; its table row names the file it breaks, the
# fault kinds of its run and the seed. VERSITYGW names the S3 server binary when this tree has
# no .cache/bin/versitygw. The script prints one line per mutant and, at the end,
# the Markdown table docs/testing.md keeps. Not part of CI's short run (too long).
set -u
cd "$(dirname "$0")/../../.."
root=$PWD
duration=150s
db=postgres
while [ $# -gt 0 ]; do
	case "$1" in
	-d) duration=$2; shift 2 ;;
	-db) db=$2; shift 2 ;;
	*) break ;;
	esac
done
all="kill,pause,dbcut,dbrestart,redisrestart,s3stop,rediscut,s3cut"
# name | file it breaks | fault kinds | seed | the check that must catch it
table="
inbox-rehandles|event/inbox.go|$all|11|events.push_once_per_socket
cron-claim-unlocked|cron/claim_store.go|$all|12|cron.fired_at_most_once
cron-finish-unguarded|cron/claim_store.go|pause,dbcut|13|cron.fired_at_most_once
relay-failed-as-sent|event/outbox/relay.go|redisrestart,kill|14|events.committed_delivered_once_per_group
revocation-not-broadcast|security/token/feed.go|$all|15|security.revoked_token_refused
decide-unlocked|approval/command_decide.go|$all|16|approval.task_decided_once
user-change-not-broadcast|security/token/feed.go|kill,pause|17|security.role_change_applied
jwt-no-leeway|security/token/jwt.go|kill,pause|19|security.token_accepted_across_skew
relay-users-local-only|push/relay.go|kill,dbcut|19|push.user_push_reaches_every_node
relay-echoes-own|push/relay.go|$all|20|push.user_push_once_per_socket
"
want="$*"
work=$(mktemp -d /tmp/svc-mutants-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/faults" ./bench/faults || exit 2
rows=()
survived=0
while IFS='|' read -r name file faults seed expect; do
	[ -z "$name" ] && continue
	if [ -n "$want" ] && [[ " $want " != *" $name "* ]]; then
		continue
	fi
	if [ ! -f "$file" ]; then
		echo "$name: $file does not exist; update the table" >&2
		exit 2
	fi
	sed -f "bench/faults/mutants/$name.sed" "$file" >"$work/$name.go" || exit 2
	if cmp -s "$file" "$work/$name.go"; then
		echo "$name: the sed script no longer changes $file; update it" >&2
		exit 2
	fi
	printf '{"Replace":{"%s":"%s"}}' "$root/$file" "$work/$name.go" >"$work/$name.json"
	"$work/faults" -db "$db" ${VERSITYGW:+-versitygw "$VERSITYGW"} -overlay "$work/$name.json" -seed "$seed" -duration "$duration" -faults "$faults" >"$work/$name.log" 2>&1
	rc=$?
	# The checks that failed: rows of the invariants table with violations.
	failed=$(awk '/^invariants/{on=1; next} on && NF==4 && $4+0>0 {printf "%s%s (%s)", sep, $1, $4; sep=", "}' "$work/$name.log")
	# Killed means the check meant for the break failed; a run failed only by other checks
	# (a slow recovery, say) does not prove the break is seen.
	case $rc in
	1) if [[ "$failed" == *"$expect ("* ]]; then verdict=killed; else
		verdict="SURVIVED ($expect passed)"; survived=$((survived + 1))
	fi ;;
	0) verdict=SURVIVED; survived=$((survived + 1)) ;;
	*) verdict="harness error ($rc)"; survived=$((survived + 1)); tail -20 "$work/$name.log" >&2 ;;
	esac
	faultsRun=$(grep -Eo '[0-9]+ faults, [0-9.]+ % of the run' "$work/$name.log" | head -1)
	echo "$name: $verdict — ${failed:-no violation} [$faultsRun]"
	cp "$work/$name.log" "/tmp/svc-mutant-$name.log"
	rows+=("| \`$name\` | \`$file\` | $faults | $seed | \`$expect\` | $verdict | ${failed:-—} |")
done <<<"$table"
echo
echo "| mutant | breaks | faults | seed | must fail | result | failed checks (violations) |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "($db, $duration each; logs in /tmp/svc-mutant-*.log)"
if [ "$survived" -gt 0 ]; then
	echo "FAIL: $survived mutant(s) survived"
	exit 1
fi
echo "PASS: every mutant killed"
