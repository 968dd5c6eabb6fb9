# push/relay.go — a push to users is delivered on the node that sent it only: the relay does
# not publish it to the other nodes (broadcasts still go out).
/^func (r \*relay) publishMessage(/a\
	if len(targets) > 0 \&\& targets[0].Kind == KindUsers { // mutant: user pushes stay local\
		return\
	}
