package token

import (
	"sync"
	"time"
)

// revokedSet is every token family revoked on any node whose access tokens may still be
// presented (issue #34): the complete set, not a cache, so checking a token's family never
// reads the database. It is filled at start from sys_security_token_family (revoked_at within
// one access-token lifetime) and kept current by this node's revocations and the change feed.
//
// Memory (issue #43): a plain map from the family id, a UUID, as 16 bytes to the entry's expiry
// in unix seconds; a family id that is not a UUID (none svc issues) goes to a small map of
// strings instead. Neither key nor value holds a pointer, so the collector does not scan the
// map's memory, and at Go 1.26's swiss tables (8-slot groups of 20-byte slots, at most 7/8
// full) an entry costs 24 to 48 bytes of heap, within the 64-byte target
// (TestRevokedSetBytesPerFamily). An entry is forgotten once every access token of its family
// has expired (revocation time + the access lifetime + leeway + clock margin), at the latest at
// the hourly sweep, which copies the live entries into a new map so the memory of a past burst
// of revocations goes back to the heap (a Go map does not shrink when entries are deleted).
type revokedSet struct {
	mu     sync.RWMutex
	ids    map[[16]byte]uint32
	other  map[string]uint32
	loaded bool // filled from the database: absence means live
}

// parseFamilyID returns the 16 bytes of a UUID in its 36-character form.
func parseFamilyID(s string) (id [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return id, false
		}
		id[j] = hi<<4 | lo
		j++
		i += 2
	}
	return id, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// expiryUnix is t in unix seconds, rounded up, at least 1 (0 is a missing entry's value).
func expiryUnix(t time.Time) uint32 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return uint32(min(max(s, 1), 1<<32-1))
}

// revoked reports whether family fid is in the set and not expired at now.
func (r *revokedSet) revoked(fid string, now time.Time) bool {
	id, uuid := parseFamilyID(fid)
	r.mu.RLock()
	defer r.mu.RUnlock()
	var exp uint32
	if uuid {
		exp = r.ids[id]
	} else {
		exp = r.other[fid]
	}
	return exp != 0 && int64(exp) > now.Unix()
}

// add remembers family fid as revoked until expires (a later expiry of the same family wins).
func (r *revokedSet) add(fid string, expires, now time.Time) {
	exp := expiryUnix(expires)
	id, uuid := parseFamilyID(fid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if uuid {
		if r.ids == nil {
			r.ids = map[[16]byte]uint32{}
		}
		r.ids[id] = max(r.ids[id], exp)
		return
	}
	if r.other == nil {
		r.other = map[string]uint32{}
	}
	if len(r.other) > 1024 {
		r.other = live(r.other, now)
	}
	r.other[fid] = max(r.other[fid], exp)
}

// sweep drops the entries expired at now (the hourly purge).
func (r *revokedSet) sweep(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = live(r.ids, now)
	r.other = live(r.other, now)
}

// live returns a new map of the entries of m not expired at now (nil when none are), sized for
// them.
func live[K comparable](m map[K]uint32, now time.Time) map[K]uint32 {
	cut := now.Unix()
	n := 0
	for _, exp := range m {
		if int64(exp) > cut {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	kept := make(map[K]uint32, n)
	for k, exp := range m {
		if int64(exp) > cut {
			kept[k] = exp
		}
	}
	return kept
}

// len is the number of families remembered (expired ones included until the next sweep).
func (r *revokedSet) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.ids) + len(r.other)
}

// isLoaded reports whether the set was filled from the database.
func (r *revokedSet) isLoaded() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.loaded
}

// setLoaded marks the set filled from the database.
func (r *revokedSet) setLoaded() {
	r.mu.Lock()
	r.loaded = true
	r.mu.Unlock()
}
