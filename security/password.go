package security

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// Hash algorithms of the built-in user store.
const (
	AlgorithmArgon2id = "argon2id"
	AlgorithmBcrypt   = "bcrypt"
)

// minBcryptCost is the lowest bcrypt cost accepted for new hashes.
const minBcryptCost = 10

// HashParams are the password-hash settings. The zero value selects DefaultHashParams.
type HashParams struct {
	// Algorithm is argon2id (default) or bcrypt.
	Algorithm string
	// Memory is the argon2id memory in KiB.
	Memory uint32
	// Time is the argon2id number of passes.
	Time uint32
	// Threads is the argon2id parallelism.
	Threads uint8
	// BcryptCost is the bcrypt cost (at least 10).
	BcryptCost int
}

// DefaultHashParams: argon2id with 9 MiB, 4 passes, 1 lane — one of the OWASP Password Storage
// Cheat Sheet's argon2id profiles, which it rates as equal defences (46 MiB × 1, 19 MiB × 2,
// 12 MiB × 3, 9 MiB × 4, 7 MiB × 5 passes): about the work of the 19 MiB × 2 profile per hash
// (20–50 ms on one core of a current server, about 20 logins per second per core, and an
// offline attacker pays the same per guess), with half the memory held per concurrent login
// (issue #34: a 64-connection login burst within idle + 32 MiB). Hashes stored under other
// parameters still verify and are re-hashed at the next login (PasswordHashUpgrader).
var DefaultHashParams = HashParams{Algorithm: AlgorithmArgon2id, Memory: 9 * 1024, Time: 4, Threads: 1, BcryptCost: 12}

const (
	argonSaltLen = 16
	argonKeyLen  = 32
)

// Hasher hashes and verifies passwords. Verification of argon2id (PHC string) and bcrypt hashes
// is always supported, whatever the configured algorithm.
type Hasher struct {
	p    HashParams
	gate *hashGate

	dummyOnce sync.Once
	dummy     string
}

// NewHasher returns a Hasher with p (zero fields take the defaults) whose gate has
// runtime.GOMAXPROCS slots. A bcrypt cost below 10 is raised to 10.
func NewHasher(p HashParams) *Hasher {
	h := newHasher(p)
	h.gate = newHashGate(runtime.GOMAXPROCS(0))
	return h
}

// NewHasherBudget returns a Hasher with p whose gate runs as many hashes at once as fit in
// budget bytes of heap (HashSlots; the security module passes svc.security.hash_memory_budget).
func NewHasherBudget(p HashParams, budget int64) *Hasher {
	h := newHasher(p)
	h.gate = newHashGate(HashSlots(h.p, budget, runtime.GOMAXPROCS(0)))
	return h
}

func newHasher(p HashParams) *Hasher {
	d := DefaultHashParams
	if p.Algorithm == "" {
		p.Algorithm = d.Algorithm
	}
	if p.Memory == 0 {
		p.Memory = d.Memory
	}
	if p.Time == 0 {
		p.Time = d.Time
	}
	if p.Threads == 0 {
		p.Threads = d.Threads
	}
	if p.BcryptCost == 0 {
		p.BcryptCost = d.BcryptCost
	}
	p.BcryptCost = max(p.BcryptCost, minBcryptCost)
	return &Hasher{p: p}
}

// Acquire waits for one of the Hasher's hash slots (NewHasher, NewHasherBudget) and returns its
// release. An argon2id computation holds its whole memory (9 MiB by default) while it runs, so
// a burst of logins must not run them all at once: the built-in password login holds a slot
// around its hash work (issue #13, #43). At most hashQueuePerSlot callers per slot wait; when
// the queue is full, or ctx's deadline is less than hashAnswerMargin away (or ctx ends) before
// a slot frees, Acquire answers ErrHashBusy (429/1401).
func (h *Hasher) Acquire(ctx context.Context) (release func(), err error) {
	return h.gate.acquire(ctx)
}

// Params returns the effective parameters.
func (h *Hasher) Params() HashParams { return h.p }

// Hash returns the encoded hash of password with a fresh random salt.
func (h *Hasher) Hash(password string) (string, error) {
	if h.p.Algorithm == AlgorithmBcrypt {
		b, err := bcrypt.GenerateFromPassword([]byte(password), h.p.BcryptCost)
		if err != nil {
			return "", fmt.Errorf("security: bcrypt: %w", err)
		}
		return string(b), nil
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("security: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, h.p.Time, h.p.Memory, h.p.Threads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches the encoded hash, in time independent of where the
// two differ. A malformed hash never matches.
func (h *Hasher) Verify(encoded, password string) bool {
	switch {
	case strings.HasPrefix(encoded, "$argon2id$"):
		ok, _ := verifyArgon2id(encoded, password)
		return ok
	case strings.HasPrefix(encoded, "$2a$"), strings.HasPrefix(encoded, "$2b$"), strings.HasPrefix(encoded, "$2y$"):
		return bcrypt.CompareHashAndPassword([]byte(encoded), []byte(password)) == nil
	}
	return false
}

// VerifyDummy spends the time of one Verify with the current parameters against a hash no
// password matches. It is called for unknown users so that "no such user" and "wrong password"
// take the same time (no user enumeration by timing).
func (h *Hasher) VerifyDummy(password string) {
	h.dummyOnce.Do(func() {
		var b [24]byte
		_, _ = rand.Read(b[:])
		h.dummy, _ = h.Hash(base64.RawStdEncoding.EncodeToString(b[:]))
	})
	_ = h.Verify(h.dummy, password)
}

// NeedsRehash reports whether encoded was made with other parameters than the current ones.
func (h *Hasher) NeedsRehash(encoded string) bool {
	if h.p.Algorithm == AlgorithmBcrypt {
		cost, err := bcrypt.Cost([]byte(encoded))
		return err != nil || cost < h.p.BcryptCost
	}
	want := fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads)
	return !strings.HasPrefix(encoded, want)
}

var errBadHash = errors.New("security: malformed argon2id hash")

func verifyArgon2id(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// hashQueuePerSlot is how many callers may wait per hash slot. A waiter holds no hash memory;
// the bound keeps a burst from queueing for longer than clients wait (64 per slot at about
// 30 ms per argon2id hash is about two seconds).
const hashQueuePerSlot = 64

// hashAnswerMargin is how long before the request's deadline a waiter gives up its place in
// the queue: the login then answers ErrHashBusy (429/1401, retry) rather than running into the
// operation's timeout (408/1402) with a hash started too late to finish.
const hashAnswerMargin = 250 * time.Millisecond

// HashSlots is the hash gate's rule (svc.security.hash_memory_budget): how many password hashes
// run at once within budget bytes of heap. An argon2id hash allocates its Memory KiB as one
// block that is garbage once the hash returns, and at the collector's default GOGC the heap
// may grow to twice what the last mark found live, so each concurrent hash is counted twice:
// slots = budget / (2 × Memory), at least 1 (logins must go on) and at most procs (a slot is a
// CPU's work: more would only hold memory while waiting for a CPU). bcrypt uses 4 KiB and gets
// procs slots.
func HashSlots(p HashParams, budget int64, procs int) int {
	procs = max(procs, 1)
	if p.Algorithm == AlgorithmBcrypt || p.Memory == 0 || budget <= 0 {
		return procs
	}
	return min(max(int(budget/(2*int64(p.Memory)*1024)), 1), procs)
}

// hashGate bounds concurrent password hashing: slots running, maxWait waiting.
type hashGate struct {
	slots   chan struct{}
	waiting atomic.Int64
	maxWait int64
}

func newHashGate(n int) *hashGate {
	n = max(n, 1)
	return &hashGate{slots: make(chan struct{}, n), maxWait: int64(n * hashQueuePerSlot)}
}

func (g *hashGate) acquire(ctx context.Context) (func(), error) {
	if g == nil { // a Hasher not made by NewHasher: no bound
		return func() {}, nil
	}
	release := func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return release, nil
	default:
	}
	if g.waiting.Add(1) > g.maxWait {
		g.waiting.Add(-1)
		return nil, ErrHashBusy
	}
	defer g.waiting.Add(-1)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-hashAnswerMargin))
		defer cancel()
	}
	select {
	case g.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ErrHashBusy
	}
}
