package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"
	"time"
)

// Entry names inside an archive (doc.go, "Archive format").
const (
	entryPrefix   = "svc-backup/"
	entryDatabase = entryPrefix + "database.sqlite"
	entryFiles    = entryPrefix + "files/"
	entryManifest = entryPrefix + "manifest.json"
	entryTrailer  = entryPrefix + "TRAILER"
	// FormatVersion is the archive format this binary writes and the newest it restores: 2 sums
	// entries with CRC-32C; format 1 (SHA-256) is still restored.
	FormatVersion = 2
	trailerMagic  = "svc-backup-trailer v1"
)

// Kinds of manifest entries.
const (
	KindDatabase = "database"
	KindFile     = "file"
)

// Manifest describes an archive; it is the last content entry, followed only by the trailer.
type Manifest struct {
	// Format is the archive format version (FormatVersion).
	Format int `json:"format"`
	// ID is the backup's id (the sys_backup row).
	ID string `json:"id"`
	// SnapshotAt is the point in time the archive holds (UTC).
	SnapshotAt time.Time `json:"snapshotAt"`
	// SvcVersion, AppVersion and GitCommit are the build data of the writing binary.
	SvcVersion string `json:"svcVersion"`
	AppVersion string `json:"appVersion,omitempty"`
	GitCommit  string `json:"gitCommit,omitempty"`
	// Database is the database system of the primary data source ("SQLite", "PostgreSQL", ...).
	Database string `json:"database"`
	// DatabaseIncluded is false on a server database: the archive holds the files only.
	DatabaseIncluded bool `json:"databaseIncluded"`
	// SchemaVersions is the highest applied migration of every module (svc_schema_migrations).
	SchemaVersions map[string]int `json:"schemaVersions"`
	// Entries lists every content entry in archive order with its size and checksum.
	Entries []Entry `json:"entries"`
	// Missing lists objects the snapshot referenced that were gone when they were read (deleted
	// after the snapshot point); their rows are restored without a file.
	Missing []string `json:"missing,omitempty"`
	// TotalBytes is the sum of the entries' sizes.
	TotalBytes int64 `json:"totalBytes"`
}

// Entry is one content entry of an archive.
type Entry struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Key  string `json:"key,omitempty"`
	Size int64  `json:"size"`
	// CRC32C is the entry's CRC-32C (Castagnoli), 8 hex digits: format 2.
	CRC32C string `json:"crc32c,omitempty"`
	// SHA256 is the entry's SHA-256 in hex: format 1 only.
	SHA256 string `json:"sha256,omitempty"`
}

// Entry checksums. A format-2 entry's tar header names its checksum in the PAX record
// paxChecksum, so a reader knows which to compute before the manifest (the last entry) arrives;
// an entry without it is a format-1 entry, summed with SHA-256.
const (
	paxChecksum    = "SVC.checksum"
	checksumCRC32C = "crc32c"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crcHex(sum uint32) string { return fmt.Sprintf("%08x", sum) }

// archiveWriter writes the tar stream of one archive, summing every entry (CRC-32C) as it is
// copied.
type archiveWriter struct {
	bw      *bufio.Writer
	seal    *sealWriter
	tw      *tar.Writer
	entries []Entry
	mtime   time.Time
	buf     []byte
}

// copyChunk is the size of the reads an entry is copied by.
const copyChunk = 1 << 20

// newArchiveWriter starts an archive on w, encrypted when key is not empty.
func newArchiveWriter(w io.Writer, key []byte, mtime time.Time) (*archiveWriter, error) {
	a := &archiveWriter{bw: bufio.NewWriterSize(w, copyChunk), mtime: mtime.UTC(), buf: make([]byte, copyChunk)}
	var out io.Writer = a.bw
	if len(key) > 0 {
		s, err := newSealWriter(a.bw, key)
		if err != nil {
			return nil, err
		}
		a.seal, out = s, s
	}
	a.tw = tar.NewWriter(out)
	return a, nil
}

// add writes one entry of size bytes from r; a reader that ends early fails (one that runs long
// is cut at size). The entry's CRC-32C is computed on the chunks as they are copied.
func (a *archiveWriter) add(name, kind, key string, r io.Reader, size int64) error {
	h := a.header(name, size)
	h.PAXRecords = map[string]string{paxChecksum: checksumCRC32C}
	if err := a.tw.WriteHeader(h); err != nil {
		return err
	}
	var n int64
	var sum uint32
	for n < size {
		m, rerr := io.ReadFull(r, a.buf[:min(int64(len(a.buf)), size-n)])
		n += int64(m)
		sum = crc32.Update(sum, castagnoli, a.buf[:m])
		if _, err := a.tw.Write(a.buf[:m]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: %w", name, rerr)
		}
	}
	if n != size {
		return fmt.Errorf("%s: %d bytes read, %d expected", name, n, size)
	}
	a.entries = append(a.entries, Entry{Name: name, Kind: kind, Key: key, Size: size, CRC32C: crcHex(sum)})
	return nil
}

func (a *archiveWriter) header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: a.mtime, Format: tar.FormatPAX}
}

// finish writes the manifest (with the entries) and the trailer, then ends the tar stream and
// the encryption and flushes. Only an archive that got here has a trailer.
func (a *archiveWriter) finish(m *Manifest) error {
	m.Entries = a.entries
	for _, e := range a.entries {
		m.TotalBytes += e.Size
	}
	body, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := a.raw(entryManifest, body); err != nil {
		return err
	}
	if err := a.raw(entryTrailer, trailer(body, len(a.entries))); err != nil {
		return err
	}
	if err := a.tw.Close(); err != nil {
		return err
	}
	if a.seal != nil {
		if err := a.seal.Close(); err != nil {
			return err
		}
	}
	return a.bw.Flush()
}

func (a *archiveWriter) raw(name string, body []byte) error {
	if err := a.tw.WriteHeader(a.header(name, int64(len(body)))); err != nil {
		return err
	}
	_, err := a.tw.Write(body)
	return err
}

// trailer is the last entry's content: the magic, the manifest's SHA-256 and the entry count.
func trailer(manifest []byte, entries int) []byte {
	sum := sha256.Sum256(manifest)
	return fmt.Appendf(nil, "%s\nmanifest-sha256 %s\nentries %d\n", trailerMagic, hex.EncodeToString(sum[:]), entries)
}

// Sink receives each content entry while an archive is read: it reads what it keeps from r (the
// rest is drained and hashed). It must not trust the bytes before readArchive returns nil.
type Sink func(e Entry, r io.Reader) error

// readArchive reads a whole archive from r (decrypting with key when it is encrypted), passing
// each content entry to sink, and verifies it: every entry's size and checksum against the
// manifest, the manifest against the trailer, nothing after the trailer, and the format
// version. It answers the manifest, or an error wrapping ErrArchiveCorrupt, ErrArchivePartial,
// ErrWrongKey, ErrKeyRequired or ErrArchiveTooNew.
func readArchive(r io.Reader, key []byte, sink Sink) (*Manifest, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(len(cryptMagic))
	var in io.Reader = br
	if string(head) == cryptMagic {
		o, err := newOpenReader(br, key)
		if err != nil {
			return nil, err
		}
		in = o
	}
	tr := tar.NewReader(in)
	var (
		got      []Entry
		manifest []byte
		buf      = make([]byte, 1<<20)
	)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no trailer (the backup did not finish)", ErrArchivePartial)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrArchivePartial, err)
		}
		switch {
		case h.Name == entryManifest:
			if manifest, err = readSmall(tr, h.Size); err != nil {
				return nil, err
			}
		case h.Name == entryTrailer:
			body, err := readSmall(tr, h.Size)
			if err != nil {
				return nil, err
			}
			return verify(tr, manifest, body, got)
		case manifest != nil:
			return nil, fmt.Errorf("%w: entry %q after the manifest", ErrArchiveCorrupt, h.Name)
		default:
			e, err := readEntry(tr, h, sink, buf)
			if err != nil {
				return nil, err
			}
			got = append(got, e)
		}
	}
}

// readEntry sums one content entry (with the checksum its header names) while the sink reads it.
func readEntry(tr *tar.Reader, h *tar.Header, sink Sink, buf []byte) (Entry, error) {
	e := Entry{Name: h.Name, Size: h.Size}
	switch {
	case h.Name == entryDatabase:
		e.Kind = KindDatabase
	case strings.HasPrefix(h.Name, entryFiles):
		e.Kind, e.Key = KindFile, strings.TrimPrefix(h.Name, entryFiles)
	default:
		return e, fmt.Errorf("%w: unknown entry %q", ErrArchiveCorrupt, h.Name)
	}
	var h32 hash.Hash32
	hr := &hashReader{r: tr}
	if h.PAXRecords[paxChecksum] == checksumCRC32C {
		h32 = crc32.New(castagnoli)
		hr.h = h32
	} else {
		hr.h = sha256.New()
	}
	if sink != nil {
		if err := sink(e, hr); err != nil {
			return e, err
		}
	}
	if _, err := io.CopyBuffer(io.Discard, hr, buf); err != nil {
		return e, fmt.Errorf("%w: %s: %w", ErrArchivePartial, h.Name, err)
	}
	if hr.n != h.Size {
		return e, fmt.Errorf("%w: %s: %d of %d bytes", ErrArchivePartial, h.Name, hr.n, h.Size)
	}
	if h32 != nil {
		e.CRC32C = crcHex(h32.Sum32())
	} else {
		e.SHA256 = hex.EncodeToString(hr.h.Sum(nil))
	}
	return e, nil
}

// verify checks the manifest against the trailer and the entries read, and the end of the stream.
func verify(tr *tar.Reader, manifest, trailerBody []byte, got []Entry) (*Manifest, error) {
	if manifest == nil {
		return nil, fmt.Errorf("%w: trailer without a manifest", ErrArchiveCorrupt)
	}
	if !bytes.Equal(trailerBody, trailer(manifest, len(got))) {
		return nil, fmt.Errorf("%w: the trailer does not match the manifest", ErrArchiveCorrupt)
	}
	if _, err := tr.Next(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the trailer", ErrArchiveCorrupt)
	}
	var m Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrArchiveCorrupt, err)
	}
	if m.Format > FormatVersion || m.Format < 1 {
		return nil, fmt.Errorf("%w: archive format %d, this binary reads up to %d", ErrArchiveTooNew, m.Format, FormatVersion)
	}
	if len(m.Entries) != len(got) {
		return nil, fmt.Errorf("%w: %d entries listed, %d present", ErrArchiveCorrupt, len(m.Entries), len(got))
	}
	for i, e := range m.Entries {
		g := got[i]
		// g holds the one checksum its header named; the manifest must list that one, equal.
		if e.Name != g.Name || e.Size != g.Size || e.SHA256 != g.SHA256 || e.CRC32C != g.CRC32C || e.Kind != g.Kind || e.Key != g.Key {
			return nil, fmt.Errorf("%w: entry %q: checksum or size mismatch", ErrArchiveCorrupt, e.Name)
		}
	}
	return &m, nil
}

func readSmall(r io.Reader, size int64) ([]byte, error) {
	if size > 256<<20 {
		return nil, fmt.Errorf("%w: manifest of %d bytes", ErrArchiveCorrupt, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArchivePartial, err)
	}
	return b, nil
}

// hashReader hashes and counts what is read through it.
type hashReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}
