package proxy

// The session key: a secret the replicas of one gateway share, so that what
// one replica hands a client (a 2025-11-25 session id, a 2026-07-28 handle)
// is accepted by every other. Unset, each process draws its own, and only
// it accepts what it handed out.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// SessionKeyBytes is the length of a session key.
const SessionKeyBytes = 32

// SessionKey seals session ids (AES-256-GCM) and signs handles
// (HMAC-SHA256), each under its own key derived from one secret.
type SessionKey struct {
	seal   cipher.AEAD
	handle []byte
}

// NewSessionKey derives the keys of secret, which must be
// SessionKeyBytes long.
func NewSessionKey(secret []byte) (*SessionKey, error) {
	if len(secret) != SessionKeyBytes {
		return nil, fmt.Errorf("the key is %d bytes, want %d", len(secret), SessionKeyBytes)
	}
	sealKey, err := hkdf.Key(sha256.New, secret, nil, "mcp-router session id", 32)
	if err != nil {
		return nil, err
	}
	handleKey, err := hkdf.Key(sha256.New, secret, nil, "mcp-router handle", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SessionKey{seal: aead, handle: handleKey}, nil
}

// ParseSessionKey reads a key written in base64 (standard or URL
// alphabet, padded or not), as `openssl rand -base64 32` prints one.
func ParseSessionKey(text string) (*SessionKey, error) {
	text = strings.TrimSpace(text)
	var secret []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if secret, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("not base64 (make one with: openssl rand -base64 %d)", SessionKeyBytes)
	}
	return NewSessionKey(secret)
}

// RandomSessionKey returns a key of this process alone.
func RandomSessionKey() *SessionKey {
	secret := make([]byte, SessionKeyBytes)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	k, err := NewSessionKey(secret)
	if err != nil {
		panic(err) // the length is right by construction
	}
	return k
}

// sealText encrypts and authenticates plain into URL-safe text.
func (k *SessionKey) sealText(plain []byte) string {
	nonce := make([]byte, k.seal.NonceSize(), k.seal.NonceSize()+len(plain)+k.seal.Overhead())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(k.seal.Seal(nonce, nonce, plain, nil))
}

// openText reverses sealText; any change to the text fails.
func (k *SessionKey) openText(text string) ([]byte, bool) {
	raw, ok := decodeCanonical(text)
	if !ok || len(raw) < k.seal.NonceSize()+k.seal.Overhead() {
		return nil, false
	}
	n := k.seal.NonceSize()
	plain, err := k.seal.Open(nil, raw[:n], raw[n:], nil)
	return plain, err == nil
}

// decodeCanonical decodes text in the one spelling the gateway writes its
// tokens in (unpadded base64 of the URL alphabet): padding, the standard
// alphabet, line breaks (which encoding/base64 skips) and set trailing
// bits are refused, so that one token has one spelling and whatever is
// keyed by a token's text (ended sessions, live ids) meets every copy of
// it (class 9 in docs/reliability.md).
func decodeCanonical(text string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != text {
		return nil, false
	}
	return raw, true
}
