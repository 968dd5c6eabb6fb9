package security

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ownClaims are claims of every kind sign writes, with the values that test the decoder's edges.
func ownClaims(now time.Time) map[string]*claims {
	life := func(c *claims, d time.Duration) *claims {
		c.IssuedAt, c.NotBefore, c.Expires = date(now), date(now), date(now.Add(d))
		return c
	}
	return map[string]*claims{
		"access": life(&claims{ID: "01a221d4-995d-7b6c", Type: typAccess, UserID: "u1", Name: "alice",
			Subject: "u1@alice", Family: "f1", Roles: []string{"admin", "staff"}}, 30*time.Minute),
		"access without roles": life(&claims{ID: "j2", Type: typAccess, UserID: "u2", Name: "bob", Subject: "u2@bob"}, time.Minute),
		"access with details": life(&claims{ID: "j3", Type: typAccess, UserID: "u3", Name: "张三", Subject: "u3@张三",
			Details: json.RawMessage(`{"dept":"R&D","tags":["a","b,c"],"quote":"say \"hi\"\\","n":[1,{"x":null}],"t":true}`)}, time.Minute),
		"access with escaped name": life(&claims{ID: "j4", Type: typAccess, UserID: "u\"4", Name: "<b>\u2028", Subject: "x"}, time.Minute),
		"access of an app":         life(&claims{ID: "j5", Type: typAccess, UserID: "app", PType: "external_app", Details: json.RawMessage(`"plain"`)}, time.Minute),
		"refresh":                  life(&claims{ID: "j6", Type: typRefresh, UserID: "u1", Name: "alice", Family: "f1"}, time.Hour),
		"challenge": life(&claims{ID: "j7", Type: typChallenge, Mechanism: "password", Identifier: "alice",
			Pending: []string{"otp", "department"}, Resolved: []string{}}, time.Minute),
	}
}

// TestParseOwnMatchesGolangJWT is the security.jwt bypass's guard test: for tokens of every kind
// sign writes, and for tampered and foreign ones, parse answers the same with and without it.
func TestParseOwnMatchesGolangJWT(t *testing.T) {
	t.Parallel()
	keys := &signingKeys{}
	keys.store(bytes.Repeat([]byte{7}, 32))
	now := time.Now()
	lifetimes := map[string]time.Duration{typAccess: 30 * time.Minute, typRefresh: time.Hour, typChallenge: time.Minute}
	own := &signer{keys: keys, audience: "app", now: func() time.Time { return now }, lifetimes: lifetimes, own: true}
	plain := *own
	plain.own = false
	key, _ := keys.get("")

	tokens := map[string]string{}
	for name, c := range ownClaims(now) {
		tok, err := own.sign(c)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
		if _, ok := parseOwn(tok, key); !ok {
			t.Errorf("%s: parseOwn refused a token sign wrote", name)
		}
		// the decoder itself takes every payload but one with escapes (encoding/json decodes that)
		b, _ := c.MarshalJSON()
		if ok := decodeClaims(b, &claims{}); ok != (name != "access with escaped name") {
			t.Errorf("%s: decodeClaims(%s) = %v", name, b, ok)
		}
	}
	valid := tokens["access"]
	parts := strings.Split(valid, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	forge := func(header string, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
		if header != "" {
			tok.Header = map[string]any{}
			if err := json.Unmarshal([]byte(header), &tok.Header); err != nil {
				t.Fatal(err)
			}
		}
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := jwt.MapClaims{"iss": Issuer, "aud": "app", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	tokens["tampered payload"] = parts[0] + "." + b64([]byte(`{"iss":"svc","typ":"access"}`)) + "." + parts[2]
	tokens["tampered signature"] = parts[0] + "." + parts[1] + "." + strings.Repeat("A", 43)
	tokens["short signature"] = parts[0] + "." + parts[1] + "." + parts[2][:40]
	tokens["no signature"] = parts[0] + "." + parts[1] + "."
	tokens["two parts"] = parts[0] + "." + parts[1]
	tokens["alg none"] = b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	tokens["header reordered"] = forge(`{"typ":"JWT","alg":"HS256"}`, base)
	tokens["float dates"] = forge("", jwt.MapClaims{"iss": Issuer, "aud": "app", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": float64(now.Unix()) + 0.5, "nbf": float64(now.Unix()), "exp": float64(now.Add(time.Minute).Unix()) + 0.25})
	tokens["unknown member"] = forge("", jwt.MapClaims{"iss": Issuer, "aud": "app", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Minute).Unix(), "extra": 1})
	tokens["null roles"] = forge("", jwt.MapClaims{"iss": Issuer, "aud": "app", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Minute).Unix(), "rls": nil})
	tokens["expired"] = forge("", jwt.MapClaims{"iss": Issuer, "aud": "app", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": now.Add(-time.Hour).Unix(), "nbf": now.Add(-time.Hour).Unix(), "exp": now.Add(-time.Hour + time.Minute).Unix()})
	tokens["other audience"] = forge("", jwt.MapClaims{"iss": Issuer, "aud": "other", "jti": "j", "typ": typAccess, "uid": "u",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Minute).Unix()})

	for name, tok := range tokens {
		for _, typ := range []string{typAccess, typRefresh} {
			c1, err1 := own.parse(tok, typ)
			c2, err2 := plain.parse(tok, typ)
			if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(c1, c2) {
				t.Errorf("%s as %s: with the bypass %+v, %v; without %+v, %v", name, typ, c1, err1, c2, err2)
			}
		}
	}
	// the challenge token through its own type
	c1, err1 := own.parse(tokens["challenge"], typChallenge)
	c2, err2 := plain.parse(tokens["challenge"], typChallenge)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(c1, c2) {
		t.Errorf("challenge: with the bypass %+v, %v; without %+v, %v", c1, err1, c2, err2)
	}
}

// FuzzDecodeClaims holds decodeClaims to encoding/json: whatever it accepts, encoding/json
// decodes to the same claims.
func FuzzDecodeClaims(f *testing.F) {
	now := time.Unix(1795863910, 0)
	for _, c := range ownClaims(now) {
		b, err := c.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"det":null}`, `{"det":{"a":"}"},"typ":"access"}`, `{"rls":[]}`, `{"iat":0}`,
		`{"iat":01}`, `{"iat":1.5}`, `{"iat":1e3}`, `{"sub":"a\u0041"}`, `{"typ":"access","typ":"refresh"}`,
		`{"det":[1,2]}`, `{"det":"x\"y"}`, `{"det":{"a":[}`, `{"rls":["a",]}`, `{"pnm":"\xff"}`, `{ "iss":"svc"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast claims
		if !decodeClaims(b, &fast) {
			return
		}
		var slow claims
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("decodeClaims accepted %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: decodeClaims %+v, encoding/json %+v", b, fast, slow)
		}
	})
}

func benchSigner(b *testing.B) (*signer, string) {
	keys := &signingKeys{}
	keys.store(bytes.Repeat([]byte{7}, 32))
	now := time.Now()
	s := &signer{keys: keys, audience: "svc-app", now: func() time.Time { return now },
		lifetimes: map[string]time.Duration{typAccess: 30 * time.Minute}}
	c := &claims{ID: "01a221d4-995d-7b6c-857d-bea2425ba8cd", Type: typAccess, UserID: "01a221d3-53d3-7354-a0d9-a7bb93bd9fa6", Name: "bench",
		Subject: "01a221d3-53d3-7354-a0d9-a7bb93bd9fa6@bench", Family: "01a221d4-995d-7b6a-89f4-bfef4d147175", Roles: []string{"admin"},
		IssuedAt: date(now), NotBefore: date(now), Expires: date(now.Add(30 * time.Minute))}
	tok, err := s.sign(c)
	if err != nil {
		b.Fatal(err)
	}
	return s, tok
}

// BenchmarkSignerParse checks a token not seen before, with the security.jwt bypass ("own") and
// with golang-jwt alone.
func BenchmarkSignerParse(b *testing.B) {
	for _, own := range []bool{true, false} {
		b.Run(map[bool]string{true: "own", false: "golang-jwt"}[own], func(b *testing.B) {
			s, tok := benchSigner(b)
			s.own = own
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.parse(tok, typAccess); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseOwn(b *testing.B) {
	s, tok := benchSigner(b)
	key, _ := s.keys.get("")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseOwn(tok, key); !ok {
			b.Fatal("not own")
		}
	}
}
