package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrSuperseded: a newer transfer of the same part began while this one was still open, so this
// one was cancelled and nothing it wrote stands (issue #11: a client whose connection died
// mid-part must not hold up, nor overwrite, the part its uploader sends again).
var ErrSuperseded = errors.New("backend: part transfer superseded by a newer one")

// Transfers tracks the open transfers of multipart parts within this process, so that the newest
// transfer of a part wins, however slowly an older one's body arrives:
//
//   - Begin cancels the context of the part's open transfer (with cause ErrSuperseded) and makes
//     the new transfer the part's current one; it never waits for the older one;
//   - every write of a part's bytes or record goes through Write, which holds the part's lock
//     (giving up with the context) and runs only while its transfer is the current one, so once
//     a newer transfer has begun, nothing of an older one is written, and the writes of two
//     transfers never interleave.
//
// The bytes an older transfer wrote before it was superseded are overwritten by the newer one,
// which writes the whole part. A backend embeds a Transfers and calls Begin at the start of
// PutPart. The zero value is ready to use.
type Transfers struct {
	mu    sync.Mutex
	seq   uint64
	parts map[transferKey]*partSlot
}

type transferKey struct {
	uploadID string
	number   int
}

// partSlot is the state of one part with open transfers; it is dropped with its last transfer.
type partSlot struct {
	lock    chan struct{} // one-slot semaphore: a waiter can give up with its context
	current uint64        // token of the newest transfer (under Transfers.mu)
	cancel  context.CancelCauseFunc
	refs    int
}

// Transfer is one open transfer of a part, from Begin to End.
type Transfer struct {
	ts     *Transfers
	key    transferKey
	slot   *partSlot
	token  uint64
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Begin opens a transfer of part number of the session uploadID and supersedes the part's open
// transfer, if any. The returned context ends with ctx, or with cause ErrSuperseded when a newer
// transfer begins; the caller streams the part under it and must call End.
func (ts *Transfers) Begin(ctx context.Context, uploadID string, number int) (context.Context, *Transfer) {
	tctx, cancel := context.WithCancelCause(ctx)
	k := transferKey{uploadID, number}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.parts == nil {
		ts.parts = make(map[transferKey]*partSlot)
	}
	slot := ts.parts[k]
	if slot == nil {
		slot = &partSlot{lock: make(chan struct{}, 1)}
		ts.parts[k] = slot
	}
	if slot.cancel != nil {
		slot.cancel(ErrSuperseded)
	}
	ts.seq++
	slot.current, slot.cancel = ts.seq, cancel
	slot.refs++
	return tctx, &Transfer{ts: ts, key: k, slot: slot, token: ts.seq, ctx: tctx, cancel: cancel}
}

// Write runs fn, which writes the part's bytes or its record, holding the part's lock and only
// while t is the part's current transfer; otherwise it answers ErrSuperseded. Waiting for the
// lock ends with t's context (whose cause is ErrSuperseded once a newer transfer began).
func (t *Transfer) Write(fn func() error) error {
	select {
	case t.slot.lock <- struct{}{}:
	case <-t.ctx.Done():
		return t.Err(context.Cause(t.ctx))
	}
	defer func() { <-t.slot.lock }()
	if !t.current() {
		return ErrSuperseded
	}
	return fn()
}

func (t *Transfer) current() bool {
	t.ts.mu.Lock()
	defer t.ts.mu.Unlock()
	return t.slot.current == t.token
}

// Err returns ErrSuperseded (wrapping err) when t was superseded, else err: a superseded
// transfer's reads and writes fail with whatever the cancellation caused, and the caller must
// tell that apart from a failure of its own.
func (t *Transfer) Err(err error) error {
	if err == nil || errors.Is(err, ErrSuperseded) || t.current() {
		return err
	}
	return fmt.Errorf("%w: %w", ErrSuperseded, err)
}

// End closes the transfer and releases its context.
func (t *Transfer) End() {
	t.cancel(context.Canceled)
	t.ts.mu.Lock()
	defer t.ts.mu.Unlock()
	if t.slot.current == t.token {
		t.slot.cancel = nil
	}
	if t.slot.refs--; t.slot.refs == 0 {
		delete(t.ts.parts, t.key)
	}
}

// ContextReader returns r failing with ctx's error once ctx is done, checked before each Read:
// a copy stops at the next chunk when its request ends or its transfer is superseded.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
