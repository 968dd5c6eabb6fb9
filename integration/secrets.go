package integration

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
)

// sealedPrefix marks a sealed secret: "enc:" + base64(nonce ‖ ciphertext ‖ tag) (§9).
const sealedPrefix = "enc:"

// Errors of the secret codec. Resources turn them into 2617 (auth params) or 2620 (data source).
var (
	// ErrSecretKeyMissing: a stored value is sealed but no secret_key is configured.
	ErrSecretKeyMissing = errors.New("integration: a stored secret is encrypted but svc.integration.secret_key is not set")
	// ErrSecretUndecryptable: a sealed value does not open with the configured key and algorithm.
	ErrSecretUndecryptable = errors.New("integration: a stored secret cannot be decrypted with the configured key")
	// ErrMaskedSecretWithoutPrior: "******" was submitted for a secret that has no stored value.
	ErrMaskedSecretWithoutPrior = errors.New("integration: masked secret submitted without a stored value")
)

// Secrets seals and opens the secrets of systems at rest with AES-GCM or SM4-GCM (§9). The
// zero key stores plaintext. It is safe for concurrent use.
type Secrets struct {
	codec *rpc.BodyCodec // nil: plaintext
}

// NewSecrets returns the codec of a standard-base64 key (empty: plaintext) for algorithm
// (aes or sm4; empty means aes). The wire format of nonce ‖ ciphertext ‖ tag with a fresh
// 12-byte nonce and no additional data is the protected transport's, so its codec is reused.
func NewSecrets(key string, algorithm config.SecretAlgorithm) (*Secrets, error) {
	if key == "" {
		return &Secrets{}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, fmt.Errorf("svc.integration.secret_key: %v: %w", err, config.ErrInvalidIntegrationSecretKey)
	}
	enc := rpc.EncodingAESGCM
	switch algorithm {
	case "", config.SecretAlgorithmAES:
	case config.SecretAlgorithmSM4:
		enc = rpc.EncodingSM4GCM
	default:
		return nil, fmt.Errorf("svc.integration.secret_algorithm %q: %w", algorithm, config.ErrInvalidIntegrationSecretAlgorithm)
	}
	codec, err := rpc.NewBodyCodec(enc, raw)
	if err != nil {
		return nil, fmt.Errorf("svc.integration.secret_key: %v: %w", err, config.ErrInvalidIntegrationSecretKey)
	}
	return &Secrets{codec: codec}, nil
}

// Plaintext reports whether secrets are stored unencrypted (no key configured).
func (s *Secrets) Plaintext() bool { return s.codec == nil }

// Seal returns the stored form of a secret: sealed with the key, or the plaintext without
// one. Empty values and values already sealed are returned as they are (never sealed twice).
func (s *Secrets) Seal(v string) string {
	if v == "" || s.codec == nil || strings.HasPrefix(v, sealedPrefix) {
		return v
	}
	return sealedPrefix + string(s.codec.Seal([]byte(v)))
}

// Open returns the plaintext of a stored secret. A value without the prefix is plaintext
// (key-less deployments stay readable); a sealed value without a key is ErrSecretKeyMissing,
// one that fails to open ErrSecretUndecryptable.
func (s *Secrets) Open(v string) (string, error) {
	text, ok := strings.CutPrefix(v, sealedPrefix)
	if !ok {
		return v, nil
	}
	if s.codec == nil {
		return "", ErrSecretKeyMissing
	}
	plain, err := s.codec.Open([]byte(text))
	if err != nil {
		return "", ErrSecretUndecryptable
	}
	return string(plain), nil
}

// keep resolves a submitted secret against the stored one: "******" keeps the stored value
// (none stored is ErrMaskedSecretWithoutPrior); anything else is sealed.
func (s *Secrets) keep(submitted, stored string) (string, error) {
	if submitted != MaskedSecret {
		return s.Seal(submitted), nil
	}
	if stored == "" {
		return "", ErrMaskedSecretWithoutPrior
	}
	return stored, nil
}

// mask is the response form of a secret: "******" when set.
func mask(v string) string {
	if v == "" {
		return v
	}
	return MaskedSecret
}
