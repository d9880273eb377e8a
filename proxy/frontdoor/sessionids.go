package frontdoor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// SessionIDs is a server.SessionIdManager for the streamable HTTP server
// (SEC-06, BI-12). mcp-go's default manager accepts any well-formed UUID
// as a session id and forgets nothing it is told to terminate, so a
// forged or deleted id still works. SessionIDs mints 128-bit ids from
// crypto/rand and remembers the live ones: an unknown, missing or
// terminated id gets 404.
//
// It remembers one id per live session until DELETE or, with
// server.WithSessionIdleTTL, until the session idles out: use both.
type SessionIDs struct {
	mu   sync.Mutex
	live map[string]struct{}
}

var _ server.SessionIdManager = (*SessionIDs)(nil)

// NewSessionIDs returns an empty SessionIDs.
func NewSessionIDs() *SessionIDs {
	return &SessionIDs{live: make(map[string]struct{})}
}

// Generate mints and records a new id: 32 hex digits, 128 random bits.
func (s *SessionIDs) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	id := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = struct{}{}
	return id
}

// errUnknownSession makes mcp-go answer 404.
var errUnknownSession = errors.New("unknown or terminated session id")

// Validate accepts only live ids.
func (s *SessionIDs) Validate(sessionID string) (isTerminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[sessionID]; !ok {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate forgets the id; later requests with it get 404.
func (s *SessionIDs) Terminate(sessionID string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, sessionID)
	return false, nil
}

// SessionIdleTTL is how long an HTTP session lives unused: the MCP server
// forgets it then, and so does Guard.
const SessionIdleTTL = 30 * time.Minute
