# cron/claim_store.go — a run's outcome is written even after its lease was lost and another
# node took the occurrence over (finishRun without its status = running guard).
/^func finishRun/,/^}/s|Where("id = ?", id)\.Where("status = ?", StatusRunning)\.Exec(ctx)|Where("id = ?", id).Exec(ctx)|
