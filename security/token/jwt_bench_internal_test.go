package token

import (
	"bytes"
	"testing"
	"time"
)

func benchSigner(b *testing.B) (*signer, string) {
	keys := &Keys{}
	keys.Store(bytes.Repeat([]byte{7}, 32))
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

// BenchmarkSignerParse checks a token not seen before (the verified-token cache covers every
// later use of it).
func BenchmarkSignerParse(b *testing.B) {
	s, tok := benchSigner(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.parse(tok, typAccess); err != nil {
			b.Fatal(err)
		}
	}
}
