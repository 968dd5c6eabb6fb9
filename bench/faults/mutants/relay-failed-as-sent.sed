# event/outbox/relay.go — the relay marks a row whose forward to the stream failed as sent.
/^func (o \*Transport) forwardRows/,/^}/s|if err == nil {|if err == nil \|\| errors.Is(err, err) { // mutant: a failed send counts as sent|
