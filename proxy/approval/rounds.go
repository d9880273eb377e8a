package approval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// The stateless era has no session to ask on: the server answers with
// input_required, carrying its questions and an opaque state, and the
// client retries with the answers (SEP-2322). The gate's state is sealed
// under a key of this process for this very call (principal, credential,
// tool, arguments' digest) with its lapse time, and used once; an answer
// without such a state approves nothing. A Carry subject travels in the
// state itself, sealed with it, for the retry to read back (Gate.Carried).

// inputID keys the gate's question among a round's input requests.
const inputID = "mcp-router-approval"

// maxSeals bounds the states remembered as used until they lapse; one
// principal may hold a quarter, and when they are full the principal
// holding most makes room for one holding fewer (see makeRoom).
const maxSeals = 4096

// Carry is a subject that rides in its question's sealed state: the
// plan tool's decision, so that its retry runs the plan the person
// approved instead of asking the planner (and then the person) again.
type Carry []byte

// InputRequired carries the input_required result that asks first.
type InputRequired struct{ Result *mcp.CallToolResult }

func (e *InputRequired) Error() string { return "approval asked of the client" }

// rounds seals and checks the states of the stateless era's questions.
type rounds struct {
	key []byte

	mu   sync.Mutex
	used map[[sha256.Size]byte]spent // by a seal's digest (a carry makes it long)
	// floor is, by principal, the lapse at or before which its states are
	// refused: a spent one of them was forgotten to make room.
	floor map[string]time.Time
}

// spent is a used state: whose it was, and when it lapses.
type spent struct {
	who   string
	until time.Time
}

func newRounds() *rounds {
	key := make([]byte, 32)
	rand.Read(key)
	return &rounds{key: key, used: map[[sha256.Size]byte]spent{}, floor: map[string]time.Time{}}
}

// canRound tells that c's client can be asked in a round. A plan step
// cannot: an input_required answer would read as the step's success.
func canRound(c *call.Call) bool {
	return c.Era == call.Stateless && c.Step == "" && c.Caps != nil && c.Caps.Elicitation != nil
}

// ask is the input_required result that asks what about subject.
func (r *rounds) ask(c *call.Call, subject any, what string, ttl time.Duration) *InputRequired {
	state := r.seal(c, subject, time.Now().Add(ttl))
	res := server.NewInputRequestBuilder(state).Elicit(inputID, Question(what).Params).ToolResult()
	return &InputRequired{Result: res}
}

// answer reads the answer in c's retry: asked is false without a state
// sealed for this call and unused, lapsed when its time ran out.
func (r *rounds) answer(c *call.Call, subject any) (res *mcp.ElicitationResult, asked, lapsed bool) {
	if c.Input == nil || c.Input.RequestState == "" {
		return nil, false, false
	}
	until, ok := r.open(c, subject, c.Input.RequestState)
	if !ok {
		return nil, false, false
	}
	if time.Now().After(until) {
		return nil, true, true
	}
	if !r.spend(c.Input.RequestState, c.Who(), until) {
		return nil, false, false
	}
	return server.ElicitationResponse(c.Input.InputResponses, inputID), true, false
}

// seal is the state of a question about subject for c, lapsing at until:
// the lapse, the MAC, then a Carry subject's bytes.
func (r *rounds) seal(c *call.Call, subject any, until time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(until.Unix()))
	carry, _ := subject.(Carry)
	raw := append(append(b[:], r.mac(c, subject, b[:], carry)...), carry...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// open checks that state was sealed for c and subject; it returns the lapse.
func (r *rounds) open(c *call.Call, subject any, state string) (time.Time, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) < 8+sha256.Size || !hmac.Equal(raw[8:8+sha256.Size], r.mac(c, subject, raw[:8], raw[8+sha256.Size:])) {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0), true
}

// carried is the Carry that c's retry state holds, when the state was
// sealed for c about it; it is neither spent nor checked for its lapse
// (answer does both).
func (r *rounds) carried(c *call.Call) (Carry, bool) {
	if c.Input == nil || c.Input.RequestState == "" {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Input.RequestState)
	if err != nil || len(raw) <= 8+sha256.Size {
		return nil, false
	}
	carry := Carry(raw[8+sha256.Size:])
	if _, ok := r.open(c, carry, c.Input.RequestState); !ok {
		return nil, false
	}
	return carry, true
}

func (r *rounds) mac(c *call.Call, subject any, until, carry []byte) []byte {
	args, _ := json.Marshal(subject)
	sum := sha256.Sum256(args)
	m := hmac.New(sha256.New, r.key)
	for _, part := range [][]byte{until, []byte(c.Who()), []byte(c.Client), []byte(c.Tool), sum[:], carry} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	return m.Sum(nil)
}

// spend marks who's state used; false when it was (or may have been), or
// when who holds too many.
func (r *rounds) spend(state, who string, until time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, held := time.Now(), map[string]int{}
	for s, u := range r.used {
		if now.After(u.until) {
			delete(r.used, s)
		} else {
			held[u.who]++
		}
	}
	for p, f := range r.floor {
		if now.After(f) {
			delete(r.floor, p)
		}
	}
	key := sha256.Sum256([]byte(state))
	if _, dup := r.used[key]; dup || !until.After(r.floor[who]) || held[who] >= maxSeals/4 ||
		len(r.used) >= maxSeals && !r.makeRoom(who, held) {
		return false
	}
	r.used[key] = spent{who, until}
	return true
}

// makeRoom forgets the earliest-lapsing spent state of the principal
// holding most, when it holds at least two more than who, and refuses
// that principal's states lapsing as early from then on (one of them may
// be the state forgotten), so that a few principals answering their own
// questions fast cannot leave everyone else's answers unread.
func (r *rounds) makeRoom(who string, held map[string]int) bool {
	top := who
	for p, n := range held {
		if n > held[top] {
			top = p
		}
	}
	if held[top] < held[who]+2 {
		return false
	}
	var first [sha256.Size]byte
	var until time.Time
	for s, u := range r.used {
		if u.who == top && (until.IsZero() || u.until.Before(until)) {
			first, until = s, u.until
		}
	}
	delete(r.used, first)
	r.floor[top] = until
	return true
}

var errLapsed = errors.New("the answer came after the call's approval lapsed")
