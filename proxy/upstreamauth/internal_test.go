package upstreamauth

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBearerParams(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"resource metadata and scope", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="files:read files:write"`,
			map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "files:read files:write"}},
		{"token68-less, unquoted, odd case", `bearer Error=invalid_token,scope=a`, map[string]string{"error": "invalid_token", "scope": "a"}},
		{"escaped quote", `Bearer realm="a \"b\"", scope="s"`, map[string]string{"realm": `a "b"`, "scope": "s"}},
		{"another scheme", `Basic realm="x"`, nil},
		{"first of a repeated key wins", `Bearer scope="a", scope="b"`, map[string]string{"scope": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, bearerParams(tt.in)); diff != "" {
				t.Errorf("bearerParams(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestKeyFromEnvOrFile(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 32)
	for _, enc := range []string{hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw)} {
		k, err := LoadKey(func(string) (string, bool) { return enc, true }, "")
		if err != nil || !bytes.Equal(k, raw) {
			t.Errorf("key %q: got %x, %v; want %x", enc, k, err, raw)
		}
	}
	_, err := LoadKey(func(string) (string, bool) { return "short-secret-value", true }, "")
	if err == nil || strings.Contains(err.Error(), "short-secret-value") || !strings.Contains(err.Error(), KeyEnv) {
		t.Errorf("bad key: got %v, want an error naming %s and not the value", err, KeyEnv)
	}

	dir := t.TempDir()
	none := func(string) (string, bool) { return "", false }
	if _, err := ReadKey(none, dir); !errors.Is(err, ErrNoKey) {
		t.Fatalf("ReadKey with no key: got %v, want ErrNoKey", err)
	}
	k1, err := LoadKey(none, dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	k2, err := ReadKey(none, dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("the key file gave another key the second time")
	}
}

func TestSealedValuesOpenOnlyWhereTheyWereSealed(t *testing.T) {
	s, _ := newSealer(bytes.Repeat([]byte{1}, 32))
	other, _ := newSealer(bytes.Repeat([]byte{2}, 32))
	sealed := s.seal("notes", "", []byte("secret token"))
	if got, err := s.open("notes", "", sealed); err != nil || string(got) != "secret token" {
		t.Fatalf("open: got %q, %v", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for name, try := range map[string]func() ([]byte, error){
		"another upstream": func() ([]byte, error) { return s.open("mail", "", sealed) },
		"another subject":  func() ([]byte, error) { return s.open("notes", "bob", sealed) },
		"another key":      func() ([]byte, error) { return other.open("notes", "", sealed) },
		"tampered":         func() ([]byte, error) { return s.open("notes", "", tampered) },
		"truncated":        func() ([]byte, error) { return s.open("notes", "", sealed[:5]) },
	} {
		if _, err := try(); !errors.Is(err, errSealed) {
			t.Errorf("%s: got %v, want errSealed", name, err)
		}
	}
}
