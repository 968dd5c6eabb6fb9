# security/token/feed.go — a change of a built-in user (roles, disable, password) is never
# applied from the change feed: the other nodes keep what their caches hold.
/^func (f \*Feed) apply(kind, ref string) {/a\
	if kind == ChangeUser { // mutant: user changes are not broadcast\
		return\
	}
