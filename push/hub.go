package push

import (
	"cmp"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// hubShards spreads connections over locks so that registrations and deliveries to different
// users do not contend.
const hubShards = 64

var (
	errTooMany  = errors.New("push: per-user connection limit reached")
	errShutdown = errors.New("push: shutting down")
)

// hub is this node's registry of connections: by user (sharded), and by revocation key.
type hub struct {
	maxPerUser   int
	sendBuffer   int
	writeTimeout time.Duration

	seed   maphash.Seed
	shards [hubShards]shard

	kmu  sync.Mutex
	keys map[string][]*conn

	stopping  atomic.Bool
	nextID    atomic.Uint64
	count     atomic.Int64   // active connections
	overflows atomic.Int64   // connections dropped for a full send buffer
	queued    atomic.Int64   // frames queued on a connection
	closers   sync.WaitGroup // close handshakes under way
}

type shard struct {
	mu    sync.RWMutex
	users map[string][]*conn
}

func newHub(maxPerUser, sendBuffer int, writeTimeout time.Duration) *hub {
	h := &hub{maxPerUser: maxPerUser, sendBuffer: sendBuffer, writeTimeout: writeTimeout,
		seed: maphash.MakeSeed(), keys: map[string][]*conn{}}
	for i := range h.shards {
		h.shards[i].users = map[string][]*conn{}
	}
	return h
}

func (h *hub) shard(user string) *shard {
	return &h.shards[maphash.String(h.seed, user)%hubShards]
}

// add registers c, refusing it when the user already holds max_connections_per_user
// connections on this node (errTooMany) or the hub is shutting down (errShutdown).
func (h *hub) add(c *conn) error {
	s := h.shard(c.user)
	s.mu.Lock()
	switch {
	case h.stopping.Load():
		s.mu.Unlock()
		return errShutdown
	case h.maxPerUser > 0 && len(s.users[c.user]) >= h.maxPerUser:
		s.mu.Unlock()
		return errTooMany
	}
	c.id = h.nextID.Add(1)
	s.users[c.user] = append(s.users[c.user], c)
	s.mu.Unlock()
	if c.bind.Key != "" {
		h.kmu.Lock()
		h.keys[c.bind.Key] = append(h.keys[c.bind.Key], c)
		h.kmu.Unlock()
	}
	return nil
}

// remove unregisters c, after it was marked closed; removing it twice is harmless.
func (h *hub) remove(c *conn) {
	s := h.shard(c.user)
	s.mu.Lock()
	list, ok := without(s.users[c.user], c)
	if len(list) == 0 {
		delete(s.users, c.user)
	} else {
		s.users[c.user] = list
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	if c.active.Load() {
		h.count.Add(-1)
	}
	if c.bind.Key != "" {
		h.kmu.Lock()
		if keyed, _ := without(h.keys[c.bind.Key], c); len(keyed) == 0 {
			delete(h.keys, c.bind.Key)
		} else {
			h.keys[c.bind.Key] = keyed
		}
		h.kmu.Unlock()
	}
}

// without removes c from list (order is not kept) and reports whether it was there.
func without(list []*conn, c *conn) ([]*conn, bool) {
	i := slices.Index(list, c)
	if i < 0 {
		return list, false
	}
	last := len(list) - 1
	list[i], list[last] = list[last], nil
	return list[:last], true
}

// deliver queues frame on every active connection selected by targets, each at most once, and
// returns how many. Connections are collected under the shard locks and sent to after, since a
// send may remove an overflowing connection.
func (h *hub) deliver(frame []byte, targets []Target) int {
	var picked []*conn
	for _, t := range targets {
		switch t.Kind {
		case KindUsers:
			for _, u := range t.Values {
				s := h.shard(u)
				s.mu.RLock()
				picked = append(picked, s.users[u]...)
				s.mu.RUnlock()
			}
		case KindRoles:
			roles := t.Values
			picked = h.collect(picked, func(c *conn) bool { return c.hasRole(roles) })
		case KindBroadcast:
			picked = h.collect(picked, nil)
		}
	}
	if len(targets) > 1 {
		slices.SortFunc(picked, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
		picked = slices.Compact(picked)
	}
	n, queued := 0, int64(0)
	for _, c := range picked {
		if c.active.Load() {
			if c.send(frame) {
				queued++
			}
			n++
		}
	}
	h.queued.Add(queued)
	return n
}

// collect appends the connections that match (every one when match is nil).
func (h *hub) collect(dst []*conn, match func(*conn) bool) []*conn {
	for i := range h.shards {
		s := &h.shards[i]
		s.mu.RLock()
		for _, list := range s.users {
			for _, c := range list {
				if match == nil || match(c) {
					dst = append(dst, c)
				}
			}
		}
		s.mu.RUnlock()
	}
	return dst
}

// ofUser returns a snapshot of the connections of user.
func (h *hub) ofUser(user string) []*conn {
	s := h.shard(user)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.users[user])
}

// byKeys returns the connections of the revocation keys.
func (h *hub) byKeys(keys []string) []*conn {
	var out []*conn
	h.kmu.Lock()
	for _, k := range keys {
		out = append(out, h.keys[k]...)
	}
	h.kmu.Unlock()
	return out
}

// all returns a snapshot of every connection.
func (h *hub) all() []*conn { return h.collect(nil, nil) }
