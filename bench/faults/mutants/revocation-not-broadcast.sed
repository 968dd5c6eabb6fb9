# security/changes.go — a token family revocation (logout, refresh-token reuse) is never applied
# from the change feed: the other nodes do not hear of it.
/^func (f \*changeFeed) apply(kind, ref string) {/a\
	if kind == changeFamily { // mutant: revocations are not broadcast\
		return\
	}
