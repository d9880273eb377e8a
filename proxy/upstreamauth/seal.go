package upstreamauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyEnv names the environment variable that holds the key tokens are
// sealed with: 32 bytes, as 64 hex digits or in base64.
const KeyEnv = "MCP_ROUTER_TOKEN_KEY"

// KeyFile is the key file made in the state directory when KeyEnv is unset.
const KeyFile = "token.key"

const keySize = 32 // AES-256

// ErrNoKey is returned by ReadKey when there is no key yet.
var ErrNoKey = errors.New("no token key (" + KeyEnv + " unset and no " + KeyFile + ")")

// LoadKey returns the sealing key: KeyEnv's value when getenv has it, else
// the key in dir/KeyFile, which is created (mode 0600, 32 random bytes in
// base64) when missing.
func LoadKey(getenv func(string) (string, bool), dir string) ([]byte, error) {
	return loadKey(getenv, dir, true)
}

// ReadKey is LoadKey without making a key file: with neither the variable
// nor the file it returns ErrNoKey (nothing can have been sealed yet).
func ReadKey(getenv func(string) (string, bool), dir string) ([]byte, error) {
	return loadKey(getenv, dir, false)
}

func loadKey(getenv func(string) (string, bool), dir string, create bool) ([]byte, error) {
	if v, ok := getenv(KeyEnv); ok && strings.TrimSpace(v) != "" {
		k, err := parseKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyEnv, err)
		}
		return k, nil
	}
	if dir == "" && !create {
		return nil, ErrNoKey
	}
	if dir == "" {
		return nil, fmt.Errorf("no %s and no state directory for %s", KeyEnv, KeyFile)
	}
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, ErrNoKey
		}
		return createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token key: %w", err)
	}
	k, err := parseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

func createKey(path string) ([]byte, error) {
	k := make([]byte, keySize)
	rand.Read(k) // never fails
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the token key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it first
		return LoadKey(func(string) (string, bool) { return "", false }, filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("creating the token key: %w", err)
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, fmt.Errorf("writing the token key %s: %w", path, err)
	}
	return k, nil
}

// parseKey reads 32 bytes from hex or base64 (standard or URL, padded or
// not). The error never holds the value.
func parseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*keySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == keySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("not a %d-byte key in hex (%d digits) or base64", keySize, 2*keySize)
}

// sealer seals records with AES-256-GCM as a version byte, a random nonce
// and the ciphertext, bound to its upstream and subject (a row copied to
// another name does not open).
type sealer struct{ aead cipher.AEAD }

const sealVersion = 1

func newSealer(key []byte) (*sealer, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("token key: %d bytes, want %d", len(key), keySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func additional(upstream, subject string) []byte {
	return []byte("mcp-router upstream credential\x00" + upstream + "\x00" + subject)
}

func (s *sealer) seal(upstream, subject string, plain []byte) []byte {
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	out[0] = sealVersion
	rand.Read(out[1:]) // never fails
	return s.aead.Seal(out, out[1:], plain, additional(upstream, subject))
}

// errSealed is returned for a value sealed with another key, or tampered with.
var errSealed = errors.New("the stored credential does not open with this token key (was " + KeyEnv + " or " + KeyFile + " changed?): log in again")

func (s *sealer) open(upstream, subject string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, errSealed
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], additional(upstream, subject))
	if err != nil {
		return nil, errSealed
	}
	return plain, nil
}
