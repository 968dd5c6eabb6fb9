package rpc

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/emmansun/gmsm/sm4"
)

// Sizes of the protected wire format (wire-core §6.2).
const (
	protectNonceSize = 12
	protectTagSize   = 16
)

var errProtectedTooShort = errors.New("protected body shorter than nonce and tag")

// BodyCodec is the protected body transport of wire-core §6.2: the wire text is the standard
// padded base64 of nonce (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes), with a fresh random nonce
// per body and no additional data. The engine uses it for requests and responses; test clients
// and tools may use it to speak to an engine. It is safe for concurrent use.
type BodyCodec struct {
	encoding string
	header   []string // the X-Body-Encoding response header value, shared
	aead     cipher.AEAD
}

// NewBodyCodec returns the codec of encoding (EncodingAESGCM or EncodingSM4GCM) with a raw key of
// 16, 24 or 32 bytes (AES) or 16 bytes (SM4). Errors wrap ErrInvalidBodyEncoding,
// ErrMissingBodyEncodingKey or ErrInvalidBodyEncodingKey.
func NewBodyCodec(encoding string, key []byte) (*BodyCodec, error) {
	var (
		block cipher.Block
		err   error
	)
	switch encoding {
	case EncodingAESGCM, EncodingSM4GCM:
	default:
		return nil, fmt.Errorf("%w: %q (want %s or %s)", ErrInvalidBodyEncoding, encoding, EncodingAESGCM, EncodingSM4GCM)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w for %s", ErrMissingBodyEncodingKey, encoding)
	}
	if encoding == EncodingAESGCM {
		switch len(key) {
		case 16, 24, 32:
			block, err = aes.NewCipher(key)
		default:
			return nil, fmt.Errorf("%w: %s needs 16, 24 or 32 bytes, got %d", ErrInvalidBodyEncodingKey, encoding, len(key))
		}
	} else {
		if len(key) != 16 {
			return nil, fmt.Errorf("%w: %s needs 16 bytes, got %d", ErrInvalidBodyEncodingKey, encoding, len(key))
		}
		block, err = sm4.NewCipher(key)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBodyEncodingKey, err)
	}
	aead, err := cipher.NewGCM(block) // 12-byte nonce, 16-byte tag
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBodyEncodingKey, err)
	}
	return &BodyCodec{encoding: encoding, header: []string{encoding}, aead: aead}, nil
}

// Encoding returns the X-Body-Encoding value of the codec.
func (c *BodyCodec) Encoding() string { return c.encoding }

// Seal returns the wire text of plain.
func (c *BodyCodec) Seal(plain []byte) []byte {
	var scratch []byte
	return c.appendSeal(nil, &scratch, plain)
}

// appendSeal appends the wire text of plain to dst, using *scratch (grown as needed) for the
// binary form; both may be pooled buffers.
func (c *BodyCodec) appendSeal(dst []byte, scratch *[]byte, plain []byte) []byte {
	bin := slices.Grow((*scratch)[:0], protectNonceSize+len(plain)+protectTagSize)[:protectNonceSize]
	rand.Read(bin) // crypto/rand never fails (Go 1.24+)
	bin = c.aead.Seal(bin, bin, plain, nil)
	*scratch = bin
	return base64.StdEncoding.AppendEncode(dst, bin)
}

// Open decodes and authenticates a wire text (surrounding whitespace tolerated) and returns the
// plaintext. A bad base64 text, a short body or a failed tag are errors.
func (c *BodyCodec) Open(text []byte) ([]byte, error) {
	text = bytes.TrimSpace(text)
	bin := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(bin, text)
	if err != nil {
		return nil, err
	}
	bin = bin[:n]
	if len(bin) < protectNonceSize+protectTagSize {
		return nil, errProtectedTooShort
	}
	return c.aead.Open(bin[protectNonceSize:protectNonceSize], bin[:protectNonceSize], bin[protectNonceSize:], nil)
}
