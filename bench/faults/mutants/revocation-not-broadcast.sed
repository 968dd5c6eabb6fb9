# security/changes.go — a session change (logout, revocation) is never applied from the change
# feed: the other nodes do not hear of it.
/^func (f \*changeFeed) apply(kind, ref string) {/a\
	if kind == changeSession { // mutant: revocations are not broadcast\
		return\
	}
