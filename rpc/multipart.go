package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"os"
)

// Memory bounds of a multipart envelope, independent of the size of its file parts:
// plain fields are held in memory up to maxFormFieldBytes in total (more answers 413), file parts
// that must be set aside are held in memory up to maxSpoolMemory in total and go to temporary
// files beyond it, and at most maxFormParts parts are read. With the multipart reader's own
// buffers that is about 2 MiB plus a few tens of KiB per request.
const (
	maxFormFieldBytes = 1 << 20
	maxSpoolMemory    = 1 << 20
	maxFormParts      = 1000
)

// The envelope fields that must precede a file part for it to be streamed.
const (
	seenResource = 1 << iota
	seenAction
	seenVersion
	seenParams
	seenMeta
	seenComplete = seenResource | seenAction | seenVersion | seenParams
)

var errTooManyParts = errors.New("multipart: too many parts")

// multipartReadBuffer is the read buffer under the multipart reader. Without it the reader pulls
// the body 4 KiB per system call, which costs about half the server's CPU on a large upload
// part; 256 KiB per multipart request lets a part stream at disk speed.
const multipartReadBuffer = 256 << 10

// multipartState is what a multipart request holds in memory before any field: the read buffer
// and the multipart reader's own. It is reserved from the body budget on admission; fields and
// memory spools are paid for as they grow.
const multipartState = multipartReadBuffer + 8<<10

// readMultipart is step 2 for multipart/form-data (wire-core §1.2). Parts are read in order:
// plain fields fill the envelope (params and meta are JSON strings; the first of duplicates
// wins); a file part that arrives once resource, action, version and params are known is left
// unread, to be streamed straight from the body to the handler; a file part that arrives
// earlier is spooled (memory, then a temporary file) so the fields after it can be read.
func (e *Engine) readMultipart(q *request) error {
	_, ps, err := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if err != nil || ps["boundary"] == "" {
		return ErrInvalidRequestBody.Wrap(errors.New("multipart: missing boundary"))
	}
	q.mem.holding(bodyHolder(q.r)) // the envelope's fields are read into memory
	defer q.mem.holding(nil)       // the file parts are streamed: only the pace applies
	if err := q.mem.admit(q.ctx, multipartState, 0, e.cfg.BodyMemoryWait); err != nil {
		return err
	}
	_ = q.mem.take(multipartState) // admitted just above
	m := &multipartFiles{
		mem:     &q.mem,
		dir:     e.cfg.SpoolDir,
		mr:      multipart.NewReader(bufio.NewReaderSize(q.limited, multipartReadBuffer), ps["boundary"]),
		limited: q.limited,
		memLeft: maxSpoolMemory,
	}
	q.files = m
	q.env.form = true
	budget := int64(maxFormFieldBytes)
	seen := 0
	for {
		part, err := m.next()
		if err == io.EOF {
			m.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if part.FileName() == "" {
			if err := m.readField(&q.env, part, &budget, &seen); err != nil {
				return err
			}
			continue
		}
		if seen&seenComplete == seenComplete {
			m.pending = part
			return nil
		}
		if _, err := m.spool(part); err != nil {
			return err
		}
	}
}

// multipartFiles is the FileSource of a multipart envelope. It is used by one handler goroutine
// at a time and is valid only during the handler call.
type multipartFiles struct {
	mem     *bodyMemory // the request's share of the body budget
	dir     string
	mr      *multipart.Reader
	limited *limitBody
	parts   int
	pending *multipart.Part // the next file part, not yet read
	current *formFile       // the file being streamed from the body
	files   []*formFile     // every file handed out or spooled, in body order
	done    bool            // the body is exhausted
	err     error           // sticky failure of the body
	memLeft int64
	temps   []*os.File
}

var _ FileSource = (*multipartFiles)(nil)

// File returns the first file part named field. Parts before it that the handler did not ask for
// are spooled, so asking for them later still works; the unread rest of a streamed part is
// spooled too when the handler moves on to a later part.
func (m *multipartFiles) File(field string) (File, bool, error) {
	for _, f := range m.files {
		if f.field == field {
			return f, true, nil
		}
	}
	if m.err != nil {
		return nil, false, m.err
	}
	for {
		if m.pending == nil {
			if m.done {
				return nil, false, nil
			}
			if err := m.detachCurrent(); err != nil {
				m.err = err
				return nil, false, err
			}
			p, err := m.next()
			if err == io.EOF {
				m.done = true
				return nil, false, nil
			}
			if err != nil {
				m.err = err
				return nil, false, err
			}
			if p.FileName() == "" {
				continue // plain fields after the first file part are ignored
			}
			m.pending = p
		}
		p := m.pending
		m.pending = nil
		if p.FormName() == field {
			f := &formFile{field: field, filename: p.FileName(), header: p.Header, size: -1, r: p, m: m}
			m.current = f
			m.files = append(m.files, f)
			return f, true, nil
		}
		if _, err := m.spool(p); err != nil {
			m.err = err
			return nil, false, err
		}
	}
}

// next returns the next part with a form name, or io.EOF.
func (m *multipartFiles) next() (*multipart.Part, error) {
	for {
		if m.parts >= maxFormParts {
			return nil, ErrInvalidRequestBody.Wrap(errTooManyParts)
		}
		p, err := m.mr.NextPart()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			return nil, m.bodyError(err)
		}
		m.parts++
		if p.FormName() != "" {
			return p, nil
		}
	}
}

// bodyError maps a failure of the multipart body: past the limit 413, otherwise 400.
func (m *multipartFiles) bodyError(err error) error {
	if m.limited.exceeded {
		return ErrBodyTooLarge
	}
	return ErrInvalidRequestBody.Wrap(err)
}

// readField stores an envelope field (within the field budget) and discards any other.
func (m *multipartFiles) readField(env *envelope, part *multipart.Part, budget *int64, seen *int) error {
	var (
		dst    *field
		bit    int
		isJSON bool
	)
	switch part.FormName() {
	case "resource":
		dst, bit = &env.resource, seenResource
	case "action":
		dst, bit = &env.action, seenAction
	case "version":
		dst, bit = &env.version, seenVersion
	case "params":
		dst, bit, isJSON = &env.params, seenParams, true
	case "meta":
		dst, bit, isJSON = &env.meta, seenMeta, true
	}
	if dst == nil || *seen&bit != 0 {
		if _, err := io.Copy(io.Discard, part); err != nil {
			return m.bodyError(err)
		}
		return nil
	}
	val, err := fill(part, 512, *budget, m.mem.take, m.mem.give)
	switch {
	case err == errOverflow:
		return ErrBodyTooLarge
	case errors.Is(err, ErrServiceBusy):
		return err
	case err != nil:
		return m.bodyError(err)
	}
	*budget -= int64(len(val))
	*seen |= bit
	if isJSON {
		*dst = formJSONField(val)
	} else {
		*dst = field{val: val, state: fieldSet}
	}
	return nil
}

// formJSONField checks a params/meta form value: an object, or empty/null for "absent".
func formJSONField(v []byte) field {
	t := bytes.TrimSpace(v)
	switch {
	case len(t) == 0 || string(t) == "null":
		return field{}
	case t[0] == '{' && json.Valid(t):
		return field{val: t, state: fieldSet}
	}
	return field{state: fieldInvalid}
}

// spool sets a file part aside and records it.
func (m *multipartFiles) spool(p *multipart.Part) (*formFile, error) {
	r, n, err := m.spoolData(p)
	if err != nil {
		return nil, err
	}
	f := &formFile{field: p.FormName(), filename: p.FileName(), header: p.Header, size: n, r: r, m: m}
	m.files = append(m.files, f)
	return f, nil
}

// detachCurrent spools the unread rest of the streamed part before the reader moves past it.
func (m *multipartFiles) detachCurrent() error {
	f := m.current
	if f == nil {
		return nil
	}
	m.current = nil
	r, _, err := m.spoolData(f.r)
	if err != nil {
		return err
	}
	f.r = r
	return nil
}

// spoolData copies src to memory while the request's spool allowance and the body memory budget
// last, then to a temporary file, and returns a reader over the copy and its size.
func (m *multipartFiles) spoolData(src io.Reader) (io.Reader, int64, error) {
	buf, err := fill(src, 512, m.memLeft, m.mem.take, m.mem.give)
	if err == nil {
		m.memLeft -= int64(len(buf))
		return bytes.NewReader(buf), int64(len(buf)), nil
	}
	if err != errOverflow && !errors.Is(err, ErrServiceBusy) {
		return nil, 0, m.bodyError(err)
	}
	tmp, err := os.CreateTemp(m.dir, "svc-rpc-part-*")
	if err != nil {
		return nil, 0, ErrUnknown.Wrap(err)
	}
	m.temps = append(m.temps, tmp)
	n, err := tmp.Write(buf) // what fill read before it stopped
	if err != nil {
		return nil, 0, ErrUnknown.Wrap(err)
	}
	rest, err := io.Copy(tmp, src)
	if err != nil {
		if m.limited.exceeded || !isWriteError(err) {
			return nil, 0, m.bodyError(err)
		}
		return nil, 0, ErrUnknown.Wrap(err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, 0, ErrUnknown.Wrap(err)
	}
	return tmp, int64(n) + rest, nil
}

// isWriteError tells a failure of the temporary file (a server fault) from one of the body.
func isWriteError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}

// cleanup closes and removes the temporary files once the handler has returned.
func (m *multipartFiles) cleanup() {
	for _, f := range m.temps {
		f.Close()
		os.Remove(f.Name())
	}
	m.temps = nil
}

// formFile is one file part handed to a handler: streamed from the body (Size -1) or read back
// from its spooled copy.
type formFile struct {
	field, filename string
	header          textproto.MIMEHeader
	size            int64
	r               io.Reader
	m               *multipartFiles
}

var _ File = (*formFile)(nil)

// Read reads the part. Failures of the body surface as *Error values (413 past the body limit,
// 400 for a malformed body), so a handler that returns them wrapped renders the right envelope.
func (f *formFile) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		if _, ok := AsError(err); !ok {
			err = f.m.bodyError(err)
		}
	}
	return n, err
}

// Field returns the form field name of the part.
func (f *formFile) Field() string { return f.field }

// Filename returns the client-supplied file name.
func (f *formFile) Filename() string { return f.filename }

// Header returns the part's MIME header.
func (f *formFile) Header() textproto.MIMEHeader { return f.header }

// Size returns the size of a spooled part, or -1 for a part streamed from the body.
func (f *formFile) Size() int64 { return f.size }
