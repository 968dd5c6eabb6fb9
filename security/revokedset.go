package security

import (
	"encoding/binary"
	"sync"
	"time"
)

// revokedSlotBytes is the size of one slot of revokedSet's table: a 16-byte family id and its
// expiry in unix seconds.
const revokedSlotBytes = 20

// revokedMinSlots is the smallest table.
const revokedMinSlots = 64

// revokedSet is every token family revoked on any node whose access tokens may still be
// presented (issue #34): the complete set, not a cache, so checking a token's family never
// reads the database. It is filled at start from sys_security_token_family (revoked_at within
// one access-token lifetime) and kept current by this node's revocations and the change feed.
//
// Memory: one open-addressing table (linear probing) of 20-byte slots — the family id, a UUID,
// as 16 bytes, and the entry's expiry as uint32 unix seconds (0 = empty slot) — whose size is a
// power of two; a family id that is not a UUID (none svc issues) goes to a small map instead.
// The table holds at most 3/4 of its slots; when an insert would pass that, expired entries are
// dropped and the table is rebuilt with the smallest power of two that leaves the live entries
// at most 5/8 full, so between rebuilds it is 5/16 to 3/4 full: at most 64 bytes per remembered
// family (20 / (5/16)), 27 to 64. An entry is forgotten once every access token of its family
// has expired (revocation time + the access lifetime + leeway + clock margin), at the latest at
// the first rebuild after that. The table holds no pointers and lives outside the Go heap
// (revokedAlloc: an anonymous mapping where the platform has one), so the garbage collector
// neither scans it nor counts it in its heap goal (GOGC 400 in the binary would otherwise let
// the heap grow by four times the table), and a rebuilt table's old memory is returned at once.
type revokedSet struct {
	mu     sync.RWMutex
	slots  []byte // len = cap × revokedSlotBytes
	cap    uint64 // slots, a power of two (0 before the first insert)
	n      uint64 // occupied slots
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

// home is the first slot probed for id: the id's two halves mixed by a multiplication (UUIDv7
// ids start with a timestamp, so neither half alone spreads well), top bits.
func home(id *[16]byte, capacity uint64) uint64 {
	h := (binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:])*0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9
	return h & (capacity - 1)
}

// expiryUnix is t in unix seconds, rounded up, at least 1 (0 marks an empty slot).
func expiryUnix(t time.Time) uint32 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return uint32(min(max(s, 1), 1<<32-1))
}

// find returns the slot of id, or the empty slot where it would go (found false). The caller
// holds mu; the table is not empty.
func (r *revokedSet) find(id *[16]byte) (slot uint64, found bool) {
	for i := home(id, r.cap); ; i = (i + 1) & (r.cap - 1) {
		s := r.slots[i*revokedSlotBytes : (i+1)*revokedSlotBytes]
		if binary.LittleEndian.Uint32(s[16:]) == 0 {
			return i, false
		}
		if [16]byte(s[:16]) == *id {
			return i, true
		}
	}
}

// revoked reports whether family fid is in the set and not expired at now.
func (r *revokedSet) revoked(fid string, now time.Time) bool {
	id, uuid := parseFamilyID(fid)
	r.mu.RLock()
	defer r.mu.RUnlock()
	var exp uint32
	switch {
	case !uuid:
		exp = r.other[fid]
	case r.cap > 0:
		if i, ok := r.find(&id); ok {
			exp = binary.LittleEndian.Uint32(r.slots[i*revokedSlotBytes+16:])
		}
	}
	return exp != 0 && int64(exp) > now.Unix()
}

// add remembers family fid as revoked until expires (a later expiry of the same family wins).
func (r *revokedSet) add(fid string, expires, now time.Time) {
	exp := expiryUnix(expires)
	id, uuid := parseFamilyID(fid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !uuid {
		if r.other == nil {
			r.other = map[string]uint32{}
		}
		if len(r.other) > 1024 {
			r.sweepOther(now)
		}
		r.other[fid] = max(r.other[fid], exp)
		return
	}
	if (r.n+1)*4 > r.cap*3 {
		r.rebuild(now, 1)
	}
	i, found := r.find(&id)
	s := r.slots[i*revokedSlotBytes : (i+1)*revokedSlotBytes]
	if found {
		binary.LittleEndian.PutUint32(s[16:], max(exp, binary.LittleEndian.Uint32(s[16:])))
		return
	}
	copy(s[:16], id[:])
	binary.LittleEndian.PutUint32(s[16:], exp)
	r.n++
}

// sweep drops the entries expired at now and shrinks the table to fit (the hourly purge).
func (r *revokedSet) sweep(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepOther(now)
	if r.cap > 0 {
		r.rebuild(now, 0)
	}
}

func (r *revokedSet) sweepOther(now time.Time) {
	for k, exp := range r.other {
		if int64(exp) <= now.Unix() {
			delete(r.other, k)
		}
	}
}

// rebuild moves the live entries into a new table with room for extra more, the smallest power
// of two that keeps them at most 5/8 full. The caller holds mu.
func (r *revokedSet) rebuild(now time.Time, extra uint64) {
	cut := now.Unix()
	live := extra
	for i := range r.cap {
		if exp := binary.LittleEndian.Uint32(r.slots[i*revokedSlotBytes+16:]); exp != 0 && int64(exp) > cut {
			live++
		}
	}
	capacity := uint64(revokedMinSlots)
	for live*8 > capacity*5 {
		capacity *= 2
	}
	if capacity == r.cap && live == r.n+extra {
		return // nothing to drop and the size fits
	}
	old, oldCap := r.slots, r.cap
	r.slots, r.cap, r.n = revokedAlloc(int(capacity*revokedSlotBytes)), capacity, 0
	for i := range oldCap {
		s := old[i*revokedSlotBytes : (i+1)*revokedSlotBytes]
		exp := binary.LittleEndian.Uint32(s[16:])
		if exp == 0 || int64(exp) <= cut {
			continue
		}
		id := [16]byte(s[:16])
		j, _ := r.find(&id)
		copy(r.slots[j*revokedSlotBytes:], s)
		r.n++
	}
	revokedFree(old)
}

// len is the number of families remembered (expired ones included until the next rebuild).
func (r *revokedSet) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return int(r.n) + len(r.other)
}

// bytes is the memory of the table: its slots (the map of non-UUID ids not included).
func (r *revokedSet) bytes() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.slots)
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
