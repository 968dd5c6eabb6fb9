# security/token/feed.go — a token family revocation (logout, refresh-token reuse) is never
# applied from the change feed: the other nodes do not hear of it.
/^func (f \*Feed) apply(kind, ref string) {/a\
	if kind == ChangeFamily { // mutant: revocations are not broadcast\
		return\
	}
