package rpc

import (
	"bytes"
	"compress/gzip"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/emmansun/gmsm/sm4"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAESGCMVector opens the wire text of a published AES-128-GCM vector (GCM specification test
// case 3, 96-bit IV, no AAD) with the engine codec: the wire format is nonce ‖ ciphertext ‖ tag.
func TestAESGCMVector(t *testing.T) {
	t.Parallel()
	key := unhex(t, "feffe9928665731c6d6a8f9467308308")
	iv := unhex(t, "cafebabefacedbaddecaf888")
	plain := unhex(t, "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"+
		"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255")
	ct := unhex(t, "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"+
		"21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985")
	tag := unhex(t, "4d5c2af327cd64a62cf35abd2ba6fab4")
	codec, err := NewBodyCodec(EncodingAESGCM, key)
	if err != nil {
		t.Fatal(err)
	}
	wire := base64.StdEncoding.EncodeToString(bytes.Join([][]byte{iv, ct, tag}, nil))
	got, err := codec.Open([]byte(wire))
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("Open(vector) = %x, %v; want %x", got, err, plain)
	}
}

// TestSM4GCMVector checks the engine's SM4-GCM construction against RFC 8998 appendix A.1 (the
// vector has AAD; the transport itself uses none).
func TestSM4GCMVector(t *testing.T) {
	t.Parallel()
	codec, err := NewBodyCodec(EncodingSM4GCM, unhex(t, "0123456789ABCDEFFEDCBA9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	iv := unhex(t, "00001234567800000000ABCD")
	plain := unhex(t, "AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCCDDDDDDDDDDDDDDDD"+
		"EEEEEEEEEEEEEEEEFFFFFFFFFFFFFFFFEEEEEEEEEEEEEEEEAAAAAAAAAAAAAAAA")
	aad := unhex(t, "FEEDFACEDEADBEEFFEEDFACEDEADBEEFABADDAD2")
	want := unhex(t, "17F399F08C67D5EE19D0DC9969C4BB7D5FD46FD3756489069157B282BB200735"+
		"D82710CA5C22F0CCFA7CBF93D496AC15A56834CBCF98C397B4024A2691233B8D"+
		"83DE3541E4C2B58177E065A9BF7B62EC")
	if got := codec.aead.Seal(nil, iv, plain, aad); !bytes.Equal(got, want) {
		t.Errorf("SM4-GCM seal = %X, want %X", got, want)
	}
}

// testAEAD is the client half of the protected transport, written independently of BodyCodec.
func testAEAD(t testing.TB, encoding string, key []byte) cipher.AEAD {
	t.Helper()
	var block cipher.Block
	var err error
	if encoding == EncodingSM4GCM {
		block, err = sm4.NewCipher(key)
	} else {
		block, err = aes.NewCipher(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return aead
}

func clientSeal(aead cipher.AEAD, plain string) string {
	nonce := make([]byte, 12)
	rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), nil))
}

func clientOpen(t testing.TB, aead cipher.AEAD, text []byte) []byte {
	t.Helper()
	bin, err := base64.StdEncoding.DecodeString(string(text))
	if err != nil {
		t.Fatalf("response is not base64: %v: %s", err, text)
	}
	if len(bin) < 12+16 {
		t.Fatalf("response too short: %d bytes", len(bin))
	}
	plain, err := aead.Open(nil, bin[:12], bin[12:], nil)
	if err != nil {
		t.Fatalf("response does not authenticate: %v", err)
	}
	return plain
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestOptionalEncodings covers wire-core §6.1 (protected transport off).
func TestOptionalEncodings(t *testing.T) {
	t.Parallel()
	// The parallel cases come from one client address: its share is the whole budget here, so
	// a bomb inflating past its declared size is refused for its size (413), not for the
	// address's other calls in flight (503; TestBodyBudgetShares covers that rule).
	e := newEngine(t, EngineConfig{BodyLimit: 64 << 10, BodyMemoryPerClient: MinBodyMemoryBudget}, testResource())
	env := envelopeJSON("test/things", "public_echo", "v1", `{"id":7}`)
	bomb := make([]byte, 10<<20) // 10 MiB of zeros, ~10 KiB gzipped
	tests := []struct {
		name       string
		encoding   string
		body       string
		wantStatus int
		wantCode   int
		wantMsg    string
	}{
		{"plain", "", env, 200, 0, "Success"},
		{"base64", "base64", b64([]byte(env)), 200, 0, "Success"},
		{"base64 with whitespace and line breaks", " base64 ", "\n" + b64([]byte(env))[:20] + "\r\n" + b64([]byte(env))[20:] + "  \n", 200, 0, "Success"},
		{"gzip+base64", "gzip+base64", b64(gz(t, env)), 200, 0, "Success"},
		{"unknown encoding", "brotli", env, 400, 1400, "Unsupported body encoding"},
		{"case differs", "Base64", b64([]byte(env)), 400, 1400, "Unsupported body encoding"},
		{"protected marker while off", EncodingAESGCM, env, 400, 1400, "Unsupported body encoding"},
		{"bad base64", "base64", "not*base64!", 400, 1400, "could not be decoded"},
		{"unpadded base64", "base64", strings.TrimRight(b64([]byte(env+" ")), "="), 400, 1400, "could not be decoded"},
		{"not gzip", "gzip+base64", b64([]byte(env)), 400, 1400, "could not be decoded"},
		{"truncated gzip", "gzip+base64", b64(gz(t, env)[:20]), 400, 1400, "could not be decoded"},
		{"gzip bomb", "gzip+base64", b64(gz(t, string(bomb))), 413, 1400, "too large"},
		{"decoded body not json", "base64", b64([]byte("{nope")), 400, 1400, "not a valid JSON"},
		{"empty encoded body", "base64", "", 400, 1400, "not a valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := serve(t, e, post(tt.body, HeaderBodyEncoding, tt.encoding))
			if res.Status != tt.wantStatus || res.Code != tt.wantCode || !strings.Contains(res.Message, tt.wantMsg) {
				t.Errorf("got %d %d %q, want %d %d %q", res.Status, res.Code, res.Message, tt.wantStatus, tt.wantCode, tt.wantMsg)
			}
			if h := res.Header.Get(HeaderBodyEncoding); h != "" {
				t.Errorf("response X-Body-Encoding = %q, want none (requests only)", h)
			}
		})
	}
}

// TestProtectedTransport covers wire-core §6.2 for both ciphers: every JSON response is
// encrypted, errors and the encoding rejections included.
func TestProtectedTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		encoding string
		key      []byte
		other    string
	}{
		{EncodingAESGCM, bytes.Repeat([]byte{7}, 32), EncodingSM4GCM},
		{EncodingSM4GCM, bytes.Repeat([]byte{9}, 16), EncodingAESGCM},
	} {
		t.Run(tc.encoding, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, EngineConfig{BodyLimit: 4 << 10, BodyEncoding: BodyEncoding{Enabled: true, Encoding: tc.encoding, Key: tc.key}}, testResource())
			aead := testAEAD(t, tc.encoding, tc.key)
			env := envelopeJSON("test/things", "echo", "v1", `{"id":9007199254740993}`)
			sealed := clientSeal(aead, env)
			tampered := []byte(sealed)
			tampered[len(tampered)-3] ^= 1
			tests := []struct {
				name       string
				req        *http.Request
				wantStatus int
				wantCode   int
				wantMsg    string
			}{
				{"round trip", post(sealed, HeaderBodyEncoding, tc.encoding, "Authorization", bearerAlice), 200, 0, "Success"},
				{"header trimmed", post(sealed, HeaderBodyEncoding, " "+tc.encoding+" ", "Authorization", bearerAlice), 200, 0, "Success"},
				{"missing encoding", post(env, "Authorization", bearerAlice), 400, 1400, "requires an encoded"},
				{"base64 is no downgrade", post(b64([]byte(env)), HeaderBodyEncoding, "base64", "Authorization", bearerAlice), 400, 1400, "Unsupported body encoding"},
				{"gzip+base64 is no downgrade", post(b64(gz(t, env)), HeaderBodyEncoding, "gzip+base64"), 400, 1400, "Unsupported body encoding"},
				{"other cipher", post(sealed, HeaderBodyEncoding, tc.other), 400, 1400, "Unsupported body encoding"},
				{"bad tag", post(string(tampered), HeaderBodyEncoding, tc.encoding), 400, 1400, "could not be decoded"},
				{"not base64", post("%%%", HeaderBodyEncoding, tc.encoding), 400, 1400, "could not be decoded"},
				{"too short", post(b64(make([]byte, 27)), HeaderBodyEncoding, tc.encoding), 400, 1400, "could not be decoded"},
				{"empty body passes through", post("", HeaderBodyEncoding, ""), 400, 1400, "not a valid JSON"},
				{"not found encrypted", post(clientSeal(aead, envelopeJSON("test/things", "nope", "v1", "")), HeaderBodyEncoding, tc.encoding), 404, 1200, "not found"},
				{"unauthenticated encrypted", post(clientSeal(aead, env), HeaderBodyEncoding, tc.encoding), 401, 1000, "Unauthenticated"},
				{"too large", post(strings.Repeat("A", 5<<10), HeaderBodyEncoding, tc.encoding), 413, 1400, "too large"},
				{"method not allowed", httptest.NewRequest(http.MethodGet, "/api", nil), 405, 1900, "Method not allowed"},
				{"multipart untouched", multipartReq(t, multipartFields("test/things", "public_echo", `{"id":5}`), HeaderBodyEncoding, tc.encoding), 200, 0, "Success"},
				{"urlencoded refused encrypted", post("a=b", "Content-Type", "application/x-www-form-urlencoded"), 415, 1300, "Unsupported media type"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, tt.req)
					if got := rec.Header().Get(HeaderBodyEncoding); got != tc.encoding {
						t.Fatalf("response X-Body-Encoding = %q, want %q", got, tc.encoding)
					}
					if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, "application/json") {
						t.Errorf("Content-Type = %q, want application/json", got)
					}
					res := result{Status: rec.Code}
					decodeEnvelope(t, clientOpen(t, aead, rec.Body.Bytes()), &res)
					if res.Status != tt.wantStatus || res.Code != tt.wantCode || !strings.Contains(res.Message, tt.wantMsg) {
						t.Errorf("got %d %d %q, want %d %d %q", res.Status, res.Code, res.Message, tt.wantStatus, tt.wantCode, tt.wantMsg)
					}
				})
			}
		})
	}
}

func TestProtectedResponsesDiffer(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{1}, 16)
	e := newEngine(t, EngineConfig{BodyEncoding: BodyEncoding{Enabled: true, Key: key}}, testResource())
	seen := map[string]bool{}
	for range 3 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api", nil))
		if seen[rec.Body.String()] {
			t.Fatal("two responses share a nonce")
		}
		seen[rec.Body.String()] = true
	}
	// Outside /api the renderer never encrypts.
	rec := httptest.NewRecorder()
	e.WriteError(rec, httptest.NewRequest(http.MethodGet, "/storage/files/x", nil), ErrNotFound)
	if rec.Header().Get(HeaderBodyEncoding) != "" || !strings.HasPrefix(rec.Body.String(), `{"code":1200`) {
		t.Errorf("WriteError encrypted outside /api: %s", rec.Body)
	}
}

func TestBodyCodecRoundTrip(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{EncodingAESGCM, EncodingSM4GCM} {
		key := bytes.Repeat([]byte{3}, 16)
		codec, err := NewBodyCodec(enc, key)
		if err != nil {
			t.Fatal(err)
		}
		aead := testAEAD(t, enc, key)
		msg := `{"code":0,"message":"成功","data":null}`
		if got := clientOpen(t, aead, codec.Seal([]byte(msg))); string(got) != msg {
			t.Errorf("%s: client opened %q", enc, got)
		}
		if got, err := codec.Open([]byte(clientSeal(aead, msg))); err != nil || string(got) != msg {
			t.Errorf("%s: codec opened %q, %v", enc, got, err)
		}
		if codec.Encoding() != enc {
			t.Errorf("Encoding = %q, want %q", codec.Encoding(), enc)
		}
	}
}
