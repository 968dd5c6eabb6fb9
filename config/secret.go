package config

import (
	"bytes"
	"encoding/hex"
	"fmt"
)

// MinSecretBytes is the shortest svc.security.secret accepted, in decoded bytes: an HS256 key
// shorter than the hash's 32-byte output weakens it.
const MinSecretBytes = 32

// publicSecrets are the hex signing secrets that ever appeared in svc's repository or
// documentation (the shipped sample configuration, test harnesses, CLI tests, benchmarks). Anyone
// who has read the source can mint tokens with them, so svc.security.secret may hold none of
// them. They are compared after hex decoding, so a change of letter case does not slip through.
var publicSecrets = []string{
	// configs/application.toml before the secret was removed from it ("svc public sample secret, change me")
	"737663207075626c69632073616d706c65207365637265742c206368616e6765206d65",
	// svctest.TestSecret before it became random per test process
	"7376637465737473656372657400000000000000000000000000000000000001",
	// cmd/svc tests
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	// bench/upload ("bench-secret-not-for-production")
	"62656e63682d7365637265742d6e6f742d666f722d70726f64756374696f6e00",
	// bench/api/svcbench tests
	"0123456789abcdef0123456789abcdef",
	// security trust-login tests (app secrets, refused as signing secrets too)
	"63726d2d7365637265742d666f722d74657374732d6f6e6c792d303132333435",
	"6572702d7365637265742d666f722d74657374732d6f6e6c792d303132333435",
}

// validateSecret checks a non-empty svc.security.secret: hex, at least MinSecretBytes bytes, and
// not one of the public values. The messages never include the value.
func validateSecret(secret string) error {
	key, err := hex.DecodeString(secret)
	if err != nil {
		return fmt.Errorf("svc.security.secret: not hex: %w", ErrInvalidSecret)
	}
	if len(key) < MinSecretBytes {
		return fmt.Errorf("svc.security.secret: %d bytes, at least %d needed (openssl rand -hex 32): %w", len(key), MinSecretBytes, ErrSecretTooShort)
	}
	if IsPublicSecret(key) {
		return fmt.Errorf("svc.security.secret: a value published in svc's repository or docs; generate your own (openssl rand -hex 32): %w", ErrPublicSecret)
	}
	return nil
}

// IsPublicSecret reports whether key (decoded bytes) is a signing secret that appeared in svc's
// repository or documentation.
func IsPublicSecret(key []byte) bool {
	for _, s := range publicSecrets {
		if p, err := hex.DecodeString(s); err == nil && bytes.Equal(p, key) {
			return true
		}
	}
	return false
}
