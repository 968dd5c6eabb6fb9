# cron/claim_store.go — the claim of due schedules takes no lock: two nodes claim the same
# occurrence at once (no lease on a cron claim).
/^func dueSchedules/,/^}/s|d\.ForUpdateSkipLocked(q)\.Scan(ctx)|q.Scan(ctx)|
