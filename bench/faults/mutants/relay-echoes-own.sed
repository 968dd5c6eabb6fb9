# push/relay.go — a node applies its own relayed frames: every push it sent reaches its own
# sockets twice (delivered locally, then again from Redis).
s|err != nil \|\| f.Origin == r.node {|err != nil { // mutant: own frames applied again|
