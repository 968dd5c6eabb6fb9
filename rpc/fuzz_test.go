package rpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// FuzzDecodeEnvelopeJSON (its seeds in testdata run with every go test): decodeEnvelopeJSON
// agrees with encoding/json's own reading of the fields: the same inputs are rejected, and
// accepted ones yield the same resource, action, version, params and meta.
func FuzzDecodeEnvelopeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var env envelope
		err := decodeEnvelopeJSON(data, &env)
		var m map[string]json.RawMessage
		oracleErr := json.Unmarshal(data, &m)
		if oracleErr != nil || m == nil {
			if err == nil {
				t.Fatalf("accepted %q, encoding/json: %v", data, oracleErr)
			}
			if !errors.Is(err, ErrInvalidRequestBody) {
				t.Fatalf("error %v, want ErrInvalidRequestBody", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("rejected %q: %v", data, err)
		}
		for name, got := range map[string]field{"resource": env.resource, "action": env.action, "version": env.version} {
			want := oracleString(m[name])
			if want.state != got.state {
				t.Fatalf("%s: state %d, want %d (%q)", name, got.state, want.state, data)
			}
			if got.state == fieldSet && replaceInvalid(got.val) != string(want.val) {
				t.Fatalf("%s = %q, want %q", name, got.val, want.val)
			}
		}
		for name, got := range map[string]field{"params": env.params, "meta": env.meta} {
			want := oracleObject(m[name])
			if want.state != got.state || !bytes.Equal(want.val, got.val) {
				t.Fatalf("%s = %d %q, want %d %q", name, got.state, got.val, want.state, want.val)
			}
		}
		_ = env.validate() // must not panic
	})
}

func oracleString(raw json.RawMessage) field {
	if raw == nil || string(raw) == "null" {
		return field{}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return field{state: fieldInvalid}
	}
	return field{val: []byte(s), state: fieldSet}
}

func oracleObject(raw json.RawMessage) field {
	if raw == nil || string(raw) == "null" {
		return field{}
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return field{state: fieldInvalid}
	}
	return field{val: raw, state: fieldSet}
}

// replaceInvalid turns each invalid UTF-8 byte into U+FFFD, as encoding/json does.
func replaceInvalid(b []byte) string { return string([]rune(string(b))) }

// FuzzDecodeEnvelopeMultipart drives whole multipart requests through the engine with a handler
// that asks for files in an order given by the params: every answer is a well-formed envelope
// with an expected status, and no spooled file outlives its request.
func FuzzDecodeEnvelopeMultipart(f *testing.F) {
	dir := f.TempDir()
	e, err := NewEngine(EngineConfig{BodyLimit: 64 << 10, SpoolDir: dir, DefaultLimit: Limit{Max: 1 << 62}})
	if err != nil {
		f.Fatal(err)
	}
	err = e.Register(Resource{Name: "files", Ops: []Op{
		Handle("upload", func(_ context.Context, c Call, p struct{ Files []string }) (map[string]int64, error) {
			out := map[string]int64{}
			for _, name := range p.Files {
				file, ok, err := c.Files.File(name)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				n, err := io.Copy(io.Discard, file)
				if err != nil {
					return nil, err
				}
				out[name] = n
			}
			return out, nil
		}, Public()),
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, boundary string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/api", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		if strings.ContainsAny(boundary, "\r\n") {
			r.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, r)
		var res result
		res.Status = rec.Code
		decodeEnvelope(t, rec.Body.Bytes(), &res)
		switch {
		case res.Status == 200 && res.Code == 0,
			res.Status == 400 && res.Code == CodeBadRequest,
			res.Status == 404 && res.Code == CodeNotFound,
			res.Status == 413 && res.Code == CodeBadRequest:
		default:
			t.Fatalf("unexpected answer %d %d %q", res.Status, res.Code, res.Message)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("%d spooled files left behind", len(entries))
		}
	})
}

// FuzzDecodeBody checks the body transports: base64 and gzip+base64 agree with the standard
// decoders and never exceed the limit, errors are the 1400 errors of wire-core §6, and the
// protected codecs round-trip and never accept what they did not seal.
func FuzzDecodeBody(f *testing.F) {
	const limit = 16 << 10
	plain, err := NewEngine(EngineConfig{BodyLimit: limit})
	if err != nil {
		f.Fatal(err)
	}
	var protected []*Engine
	for _, enc := range []string{EncodingAESGCM, EncodingSM4GCM} {
		e, err := NewEngine(EngineConfig{BodyLimit: limit, BodyEncoding: BodyEncoding{Enabled: true, Encoding: enc, Key: bytes.Repeat([]byte{5}, 16)}})
		if err != nil {
			f.Fatal(err)
		}
		protected = append(protected, e)
	}
	f.Fuzz(func(t *testing.T, encoding string, body []byte) {
		out, err := decodeBytes(plain, body, encoding)
		checkBodyError(t, err)
		if err == nil {
			if len(out) > limit && encoding != "" {
				t.Fatalf("decoded %d bytes over the %d limit", len(out), limit)
			}
			switch encoding {
			case "":
				if !bytes.Equal(out, body) {
					t.Fatal("plain body changed")
				}
			case EncodingBase64:
				want, werr := base64.StdEncoding.DecodeString(strings.Map(dropSpace, string(body)))
				if werr != nil || !bytes.Equal(out, want) {
					t.Fatalf("base64 decoded %q, standard decoder %q (%v)", out, want, werr)
				}
			case EncodingGzipBase64:
			default:
				t.Fatalf("unknown encoding %q accepted", encoding)
			}
		}
		for _, e := range protected {
			out, err := decodeBytes(e, body, encoding)
			checkBodyError(t, err)
			if err == nil && len(body) > 0 {
				t.Fatalf("%s accepted a body it did not seal: %q", encoding, body)
			}
			if err == nil && len(out) != 0 {
				t.Fatalf("empty body decoded to %q", out)
			}
			sealed := e.protect.Seal(body)
			back, err := decodeBytes(e, sealed, e.protect.Encoding())
			if err != nil || !bytes.Equal(back, body) {
				t.Fatalf("%s round trip: %q, %v", e.protect.Encoding(), back, err)
			}
		}
	})
}

// decodeBytes runs step 1's decoding of a JSON body sent with encoding.
func decodeBytes(e *Engine, body []byte, encoding string) ([]byte, error) {
	r := httptest.NewRequest(http.MethodPost, "/api", bytes.NewReader(body))
	q := &request{r: r, ctx: r.Context(), mem: bodyMemory{budget: e.budget}}
	defer q.mem.release()
	return e.decodeBody(q, encoding)
}

// dropSpace removes the ASCII whitespace the base64 transport ignores.
func dropSpace(r rune) rune {
	if strings.ContainsRune(" \t\n\r\v\f", r) {
		return -1
	}
	return r
}

func checkBodyError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	re, ok := AsError(err)
	if !ok || re.Code != CodeBadRequest || (re.HTTPStatus() != 400 && re.HTTPStatus() != 413) {
		t.Fatalf("error %v is not a 1400 error of wire-core §6", err)
	}
}
