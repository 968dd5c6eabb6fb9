package backup

import (
	"archive/tar"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// buildArchive writes an archive of a database entry and two files, encrypted with key when set.
func buildArchive(t *testing.T, key []byte, format int) []byte {
	t.Helper()
	var buf bytes.Buffer
	aw, err := newArchiveWriter(&buf, key, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	dbBytes := bytes.Repeat([]byte("sqlite page "), 300000) // > 3 MiB: several encryption chunks
	if err := aw.add(entryDatabase, KindDatabase, "", bytes.NewReader(dbBytes), int64(len(dbBytes))); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"2026/12/07/a.txt", "2026/12/07/b.bin"} {
		if err := aw.add(entryFiles+f, KindFile, f, strings.NewReader("content of "+f), int64(len("content of "+f))); err != nil {
			t.Fatal(err)
		}
	}
	m := &Manifest{Format: format, ID: "id1", SvcVersion: "v1.0.0", DatabaseIncluded: true, SchemaVersions: map[string]int{"storage": 1}}
	if err := aw.finish(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	for _, tt := range []struct {
		name string
		key  []byte
	}{{"plain", nil}, {"encrypted", key}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := buildArchive(t, tt.key, FormatVersion)
			got := map[string]string{}
			m, err := readArchive(bytes.NewReader(data), tt.key, func(e Entry, r io.Reader) error {
				b, err := io.ReadAll(r)
				got[e.Name] = crcHex(crc32.Checksum(b, castagnoli))
				return err
			})
			if err != nil {
				t.Fatalf("readArchive: %v", err)
			}
			if len(m.Entries) != 3 || m.TotalBytes == 0 {
				t.Fatalf("entries = %d, total = %d, want 3 and > 0", len(m.Entries), m.TotalBytes)
			}
			for _, e := range m.Entries {
				if got[e.Name] != e.CRC32C || e.SHA256 != "" {
					t.Errorf("%s: sink saw crc32c %s, manifest says %s (sha256 %q: format 1 only)", e.Name, got[e.Name], e.CRC32C, e.SHA256)
				}
			}
			if m.Entries[1].Key != "2026/12/07/a.txt" || m.Entries[1].Kind != KindFile {
				t.Errorf("entry 1 = %+v, want file 2026/12/07/a.txt", m.Entries[1])
			}
		})
	}
}

// TestArchiveRefusals: every damaged form of an archive is refused with its reason.
func TestArchiveRefusals(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{9}, 32)
	plain := buildArchive(t, nil, FormatVersion)
	enc := buildArchive(t, key, FormatVersion)
	flip := func(b []byte, at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0x40
		return c
	}
	tests := []struct {
		name string
		data []byte
		key  []byte
		want error
	}{
		{"truncated plain", plain[:len(plain)/2], nil, ErrArchivePartial},
		{"truncated before the trailer", plain[:bytes.Index(plain, []byte(entryTrailer))-200], nil, ErrArchivePartial},
		{"byte flipped in the database entry", flip(plain, 4096), nil, ErrArchiveCorrupt},
		{"byte flipped in a file", flip(plain, bytes.Index(plain, []byte("content of 2026/12/07/b"))+3), nil, ErrArchiveCorrupt},
		{"manifest edited", bytes.Replace(plain, []byte(`"svcVersion": "v1.0.0"`), []byte(`"svcVersion": "v0.0.1"`), 1), nil, ErrArchiveCorrupt},
		{"newer format", buildArchive(t, nil, FormatVersion+1), nil, ErrArchiveTooNew},
		{"encrypted truncated", enc[:len(enc)-100], key, ErrArchiveCorrupt},
		{"encrypted last chunk dropped", enc[:len(enc)-(4+16+lastChunkLen(t, enc))], key, ErrArchiveCorrupt},
		{"encrypted byte flipped", flip(enc, 5000), key, ErrArchiveCorrupt},
		{"encrypted wrong key", enc, bytes.Repeat([]byte{1}, 32), ErrWrongKey},
		{"encrypted without key", enc, nil, ErrKeyRequired},
		{"empty", nil, nil, ErrArchivePartial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Verify(bytes.NewReader(tt.data), tt.key, nil)
			if !errors.Is(err, tt.want) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// lastChunkLen is the plaintext length of an encrypted archive's last chunk (found by walking).
func lastChunkLen(t *testing.T, enc []byte) int {
	t.Helper()
	off := cryptHeader
	for {
		word := uint32(enc[off])<<24 | uint32(enc[off+1])<<16 | uint32(enc[off+2])<<8 | uint32(enc[off+3])
		size := int(word &^ lastChunkBit)
		if word&lastChunkBit != 0 {
			return size
		}
		off += 4 + size + 16
	}
}

func TestCheckVersions(t *testing.T) {
	t.Parallel()
	m := &Manifest{SchemaVersions: map[string]int{"storage": 2, "hostmod": 9}}
	if err := checkVersions(m, map[string]int{"storage": 2}); err != nil {
		t.Errorf("same version: %v, want nil (an unknown module is accepted)", err)
	}
	if err := checkVersions(m, map[string]int{"storage": 1}); !errors.Is(err, ErrArchiveTooNew) {
		t.Errorf("newer schema: %v, want ErrArchiveTooNew", err)
	}
}

func TestParseJobParams(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw     string
		want    JobParams
		wantErr bool
	}{
		{"", DefaultJobParams, false},
		{"null", DefaultJobParams, false},
		{`{"keepLast":3}`, JobParams{KeepLast: 3}, false},
		{`{"keepLast":3,"keepDays":1,"destination":"storage"}`, JobParams{KeepLast: 3, KeepDays: 1, Destination: "storage"}, false},
		{`{"keepLast":-1}`, JobParams{}, true},
		{`{"destination":"ftp"}`, JobParams{}, true},
		{`{"keep":1}`, JobParams{}, true},
	} {
		got, err := ParseJobParams([]byte(tt.raw))
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseJobParams(%q) = %+v, %v; want %+v, error %t", tt.raw, got, err, tt.want, tt.wantErr)
		}
	}
}

// failingReader answers n bytes of zeros, then err.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	clear(p[:k])
	f.n -= k
	return k, nil
}

// TestArchiveAddRefusesShortAndFailingReaders: an entry whose reader ends before its size, or
// fails, is an error of add (named after the entry), across chunk boundaries of the hashing
// pipeline (the archive is then abandoned: write aborts it), and close does not hang.
func TestArchiveAddRefusesShortAndFailingReaders(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	for _, tt := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"short", &failingReader{n: 3*copyChunk + 5, err: io.EOF}, "bytes read"},
		{"failing", &failingReader{n: copyChunk + 1, err: boom}, boom.Error()},
		{"empty", &failingReader{err: io.EOF}, "0 bytes read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			aw, err := newArchiveWriter(io.Discard, nil, time.Unix(1700000000, 0))
			if err != nil {
				t.Fatal(err)
			}
			err = aw.add(entryDatabase, KindDatabase, "", tt.r, 4*copyChunk)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), entryDatabase) {
				t.Fatalf("add = %v, want an error naming %s with %q", err, entryDatabase, tt.want)
			}
		})
	}
}

// TestFormat1ArchivesStillVerify: archives written by format 1 (SHA-256 per entry, no PAX
// checksum record; testdata/format1.tar*, written by that writer) verify and read, plain and
// encrypted; a byte flipped in an entry is still found, and so is an entry whose header was
// made to claim CRC-32C (the manifest lists SHA-256 for it).
func TestFormat1ArchivesStillVerify(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	for _, tt := range []struct {
		file string
		key  []byte
	}{{"testdata/format1.tar", nil}, {"testdata/format1.tar.enc", key}} {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var read []string
		m, err := readArchive(bytes.NewReader(data), tt.key, func(e Entry, r io.Reader) error {
			b, err := io.ReadAll(r)
			read = append(read, e.Name+"="+string(b[:min(len(b), 12)]))
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if m.Format != 1 || len(m.Entries) != 3 || m.Entries[0].SHA256 == "" || m.Entries[0].CRC32C != "" {
			t.Fatalf("%s: manifest %+v, want format 1 with three SHA-256 entries", tt.file, m)
		}
		if len(read) != 3 || read[1] != entryFiles+"2026/12/07/a.txt=content of 2" {
			t.Errorf("%s: the sink read %q", tt.file, read)
		}
	}
	plain, err := os.ReadFile("testdata/format1.tar")
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(plain)
	flipped[bytes.Index(flipped, []byte("content of 2026/12/07/b"))+3] ^= 0x40
	if _, err := Verify(bytes.NewReader(flipped), nil, nil); !errors.Is(err, ErrArchiveCorrupt) {
		t.Errorf("format 1, byte flipped: %v, want ErrArchiveCorrupt", err)
	}
	// Rewrite the archive with every content entry's header claiming CRC-32C.
	var relabelled bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(plain)), tar.NewWriter(&relabelled)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(h.Name, entryFiles) || h.Name == entryDatabase {
			h.PAXRecords, h.Format = map[string]string{paxChecksum: checksumCRC32C}, tar.FormatPAX
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(&relabelled, nil, nil); !errors.Is(err, ErrArchiveCorrupt) || !strings.Contains(err.Error(), "checksum or size mismatch") {
		t.Errorf("format 1 relabelled as CRC-32C: %v, want ErrArchiveCorrupt", err)
	}
}
