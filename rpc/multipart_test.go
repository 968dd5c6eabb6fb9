package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// mpPart is one part of a test multipart body; a file part has a filename.
type mpPart struct {
	name, filename string
	value          string
	r              io.Reader // file content when value is not enough
}

func multipartFields(resource, action, params string) []mpPart {
	parts := []mpPart{{name: "resource", value: resource}, {name: "action", value: action}, {name: "version", value: "v1"}}
	if params != "" {
		parts = append(parts, mpPart{name: "params", value: params})
	}
	return parts
}

func writeParts(w *multipart.Writer, parts []mpPart) error {
	for _, p := range parts {
		var (
			pw  io.Writer
			err error
		)
		if p.filename != "" {
			pw, err = w.CreateFormFile(p.name, p.filename)
		} else {
			pw, err = w.CreateFormField(p.name)
		}
		if err != nil {
			return err
		}
		r := p.r
		if r == nil {
			r = strings.NewReader(p.value)
		}
		if _, err := io.Copy(pw, r); err != nil {
			return err
		}
	}
	return w.Close()
}

// multipartReq builds a multipart POST /api request in memory.
func multipartReq(t testing.TB, parts []mpPart, hdr ...string) *http.Request {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := writeParts(w, parts); err != nil {
		t.Fatal(err)
	}
	r := post(body.String(), hdr...)
	r.Header.Set("Content-Type", w.FormDataContentType())
	return r
}

// streamReq builds a multipart request whose body is produced while the engine reads it, with
// no declared length.
func streamReq(parts []mpPart) *http.Request {
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeParts(w, parts)) }()
	r := httptest.NewRequest(http.MethodPost, "/api", pr)
	r.ContentLength = -1
	r.Header.Set("Content-Type", w.FormDataContentType())
	return r
}

// pattern is a deterministic file content of n bytes.
func pattern(n int64) io.Reader {
	return io.LimitReader(patternReader{}, n)
}

type patternReader struct{}

func (patternReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*7 + 3)
	}
	return len(p), nil
}

func patternSum(t testing.TB, n int64) uint32 {
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, pattern(n)); err != nil {
		t.Fatal(err)
	}
	return h.Sum32()
}

type uploadParams struct {
	Files   []string `json:"files"`   // fields to read, in order
	Partial int      `json:"partial"` // read this much of the first file before the others
}

type fileInfo struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"` // what File.Size reported
	Read     int64  `json:"read"`
	Sum      uint32 `json:"sum"`
	Spooled  int    `json:"spooled"` // temporary files in the spool dir while the handler ran
}

func uploadHandler(spoolDir string) func(context.Context, Call, uploadParams) (map[string]*fileInfo, error) {
	return func(_ context.Context, c Call, p uploadParams) (map[string]*fileInfo, error) {
		out := map[string]*fileInfo{}
		if c.Files == nil {
			return nil, ErrBadRequest.WithMessage("no files")
		}
		sums := map[string]io.Writer{}
		hashes := map[string]func() uint32{}
		for i, name := range p.Files {
			f, ok, err := c.Files.File(name)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			h := crc32.NewIEEE()
			sums[name], hashes[name] = h, h.Sum32
			info := &fileInfo{Filename: f.Filename(), Size: f.Size()}
			out[name] = info
			limit := int64(-1)
			if i == 0 && p.Partial > 0 {
				limit = int64(p.Partial)
			}
			n, err := copyN(h, f, limit)
			info.Read += n
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
		}
		if p.Partial > 0 && len(p.Files) > 0 {
			first := p.Files[0]
			f, _, _ := c.Files.File(first)
			n, err := io.Copy(sums[first], f)
			out[first].Read += n
			if err != nil {
				return nil, err
			}
		}
		entries, _ := os.ReadDir(spoolDir)
		for name, info := range out {
			info.Sum = hashes[name]()
			info.Spooled = len(entries)
		}
		return out, nil
	}
}

func copyN(dst io.Writer, src io.Reader, n int64) (int64, error) {
	if n < 0 {
		return io.Copy(dst, src)
	}
	return io.CopyN(dst, src, n)
}

func uploadEngine(t *testing.T, limit int64) (*Engine, string) {
	t.Helper()
	dir := t.TempDir()
	e := newEngine(t, EngineConfig{BodyLimit: limit, SpoolDir: dir}, Resource{Name: "files", Ops: []Op{
		Handle("upload", uploadHandler(dir), Public()),
		Handle("json_only", func(_ context.Context, c Call, _ NoParams) (bool, error) { return c.Files == nil, nil }, Public()),
	}}, testResource())
	return e, dir
}

func decodeFiles(t *testing.T, res result) map[string]fileInfo {
	t.Helper()
	if res.Code != 0 {
		t.Fatalf("code = %d %q, want 0", res.Code, res.Message)
	}
	var got map[string]fileInfo
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMultipartStreamsLargeFile: a 64 MiB file part after the envelope fields reaches the handler
// as a stream (Size -1, nothing spooled); the handler counts every byte.
func TestMultipartStreamsLargeFile(t *testing.T) {
	t.Parallel()
	const size = 64 << 20
	e, dir := uploadEngine(t, 128<<20)
	parts := append(multipartFields("files", "upload", `{"files":["file"]}`),
		mpPart{name: "file", filename: "big.bin", r: pattern(size)})
	got := decodeFiles(t, serve(t, e, streamReq(parts)))
	want := fileInfo{Filename: "big.bin", Size: -1, Read: size, Sum: patternSum(t, size), Spooled: 0}
	if got["file"] != want {
		t.Errorf("file = %+v, want %+v", got["file"], want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("spool dir holds %d files after the request", len(entries))
	}
}

func TestMultipartSpooling(t *testing.T) {
	t.Parallel()
	const big = 3 << 20 // over the in-memory spool budget
	e, dir := uploadEngine(t, 64<<20)
	fields := multipartFields("files", "upload", "")
	params := func(v string) mpPart { return mpPart{name: "params", value: v} }
	file := func(name string, n int64) mpPart { return mpPart{name: name, filename: name + ".bin", r: pattern(n)} }
	tests := []struct {
		name  string
		parts []mpPart
		want  map[string]fileInfo
	}{
		{"small file before params is kept in memory",
			append([]mpPart{file("file", 100)}, append(fields, params(`{"files":["file"]}`))...),
			map[string]fileInfo{"file": {Filename: "file.bin", Size: 100, Read: 100, Sum: patternSum(t, 100)}}},
		{"big file before params goes to a temporary file",
			append([]mpPart{file("file", big)}, append(fields, params(`{"files":["file"]}`))...),
			map[string]fileInfo{"file": {Filename: "file.bin", Size: big, Read: big, Sum: patternSum(t, big), Spooled: 1}}},
		{"asking for a later part spools the earlier one",
			append(append(fields, params(`{"files":["b","a"]}`)), file("a", big), file("b", 10)),
			map[string]fileInfo{
				"a": {Filename: "a.bin", Size: big, Read: big, Sum: patternSum(t, big), Spooled: 1},
				"b": {Filename: "b.bin", Size: -1, Read: 10, Sum: patternSum(t, 10), Spooled: 1},
			}},
		{"the rest of a partly read stream is spooled",
			append(append(fields, params(`{"files":["a","b"],"partial":1000}`)), file("a", big), file("b", 10)),
			map[string]fileInfo{
				"a": {Filename: "a.bin", Size: -1, Read: big, Sum: patternSum(t, big), Spooled: 1},
				"b": {Filename: "b.bin", Size: -1, Read: 10, Sum: patternSum(t, 10), Spooled: 1},
			}},
		{"missing file, unknown fields and fields after files ignored",
			append(append(append(fields, mpPart{name: "note", value: "x"}), params(`{"files":["nope","file"]}`)),
				file("file", 5), mpPart{name: "params", value: "{bad"}),
			map[string]fileInfo{"file": {Filename: "file.bin", Size: 5, Read: 5, Sum: patternSum(t, 5)}}}, // spooled while looking for "nope"
		{"first duplicate field wins",
			append(append(fields, params(`{"files":["file"]}`), params(`{"files":[]}`)), file("file", 1)),
			map[string]fileInfo{"file": {Filename: "file.bin", Size: -1, Read: 1, Sum: patternSum(t, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeFiles(t, serve(t, e, multipartReq(t, tt.parts)))
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s = %+v, want %+v", name, got[name], want)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d files, want %d", len(got), len(tt.want))
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("spool dir holds %d files after the request", len(entries))
			}
		})
	}
}

func TestMultipartFailures(t *testing.T) {
	t.Parallel()
	e, dir := uploadEngine(t, 256<<10)
	upload := func(params string, extra ...mpPart) []mpPart {
		return append(multipartFields("files", "upload", params), extra...)
	}
	many := upload(`{}`)
	for range maxFormParts {
		many = append(many, mpPart{name: "x", value: "y"})
	}
	noBoundary := multipartReq(t, upload(`{}`))
	noBoundary.Header.Set("Content-Type", "multipart/form-data")
	malformed := post("--xyz\r\nContent-Disposition: form-data; name=\"resource\"\r\n\r\nfiles\r\n--xyz-", "Content-Type", "multipart/form-data; boundary=xyz")
	tests := []struct {
		name       string
		req        *http.Request
		wantStatus int
		wantCode   int
		wantMsg    string
	}{
		{"params not json", multipartReq(t, upload(`{bad`)), 400, 1400, "Request params are not valid JSON"},
		{"params not an object", multipartReq(t, upload(`[1]`)), 400, 1400, "Request params are not valid JSON"},
		{"meta not json", multipartReq(t, append(upload(`{}`), mpPart{name: "meta", value: "nope"})), 400, 1400, "Request meta is not valid JSON"},
		{"missing resource", multipartReq(t, []mpPart{{name: "action", value: "upload"}, {name: "version", value: "v1"}}), 400, 1400, "resource is required"},
		{"bad version", multipartReq(t, []mpPart{{name: "resource", value: "files"}, {name: "action", value: "upload"}, {name: "version", value: "v 1"}}), 400, 1400, "version is invalid"},
		{"unknown action", multipartReq(t, multipartFields("files", "nope", "")), 404, 1200, "not found"},
		{"no boundary", noBoundary, 400, 1400, "not a valid JSON"},
		{"malformed body", malformed, 400, 1400, "not a valid JSON"},
		{"too many parts", multipartReq(t, many), 400, 1400, "not a valid JSON"},
		{"field over budget", multipartReq(t, upload(`{"x":"`+strings.Repeat("a", maxFormFieldBytes)+`"}`)), 413, 1400, "too large"},
		{"body over limit before the envelope", multipartReq(t, append([]mpPart{{name: "file", filename: "f", r: pattern(300 << 10)}}, upload(`{}`)...)), 413, 1400, "too large"},
		{"body over limit while streaming", streamReq(upload(`{"files":["file"]}`, mpPart{name: "file", filename: "f", r: pattern(300 << 10)})), 413, 1400, "too large"},
		{"files with a JSON request is nil", post(envelopeJSON("files", "json_only", "v1", "")), 200, 0, "Success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := serve(t, e, tt.req)
			if res.Status != tt.wantStatus || res.Code != tt.wantCode || !strings.Contains(res.Message, tt.wantMsg) {
				t.Errorf("got %d %d %q, want %d %d %q", res.Status, res.Code, res.Message, tt.wantStatus, tt.wantCode, tt.wantMsg)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("spool dir holds %d files after the request", len(entries))
			}
		})
	}
}
