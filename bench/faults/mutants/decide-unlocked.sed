# approval/command_decide.go — a decision reads its instance and its visit's tasks without their
# row locks: two nodes decide one task at once.
/^func (s \*Service) lockedTask/,/^}/s|s\.db\.ForUpdate(q)\.Scan(ctx)|q.Scan(ctx)|g
