package frontdoor

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the failed-token limit.
const (
	// DefaultTokenFailures is how many refused tokens one remote address
	// may send in a minute.
	DefaultTokenFailures = 10
	// maxFailingAddrs bounds the addresses tracked at once.
	maxFailingAddrs = 4096
)

// TokenFailures counts the refused bearer tokens of each client address,
// a bound on guessing: past its limit, the address is refused (429) until
// a share of the minute has passed. Safe for concurrent use.
type TokenFailures struct {
	perMinute int

	mu    sync.Mutex
	addrs map[netip.Prefix]*rate.Limiter
}

// NewTokenFailures returns a limit of perMinute refused tokens a minute
// per remote address [DefaultTokenFailures when perMinute <= 0].
func NewTokenFailures(perMinute int) *TokenFailures {
	if perMinute <= 0 {
		perMinute = DefaultTokenFailures
	}
	return &TokenFailures{perMinute: perMinute, addrs: map[netip.Prefix]*rate.Limiter{}}
}

// wait is how long remoteAddr's address must wait before it may try a token again.
func (f *TokenFailures) wait(remoteAddr string) time.Duration {
	key, ok := clientKey(remoteAddr)
	if !ok {
		return 0
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	lim, ok := f.addrs[key]
	if !ok {
		return 0
	}
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(lim.Limit()) * float64(time.Second))
}

// failed counts a refused token from remoteAddr.
func (f *TokenFailures) failed(remoteAddr string) {
	key, ok := clientKey(remoteAddr)
	if !ok {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	lim, ok := f.addrs[key]
	if !ok {
		if len(f.addrs) >= maxFailingAddrs {
			f.forget(now)
		}
		lim = rate.NewLimiter(rate.Every(time.Minute/time.Duration(f.perMinute)), f.perMinute)
		f.addrs[key] = lim
	}
	lim.AllowN(now, 1)
}

// forget drops the addresses whose failures are all forgotten, then any
// while full: the bound on memory comes first.
func (f *TokenFailures) forget(now time.Time) {
	for k, lim := range f.addrs {
		if lim.TokensAt(now) >= float64(f.perMinute) {
			delete(f.addrs, k)
		}
	}
	for k := range f.addrs {
		if len(f.addrs) < maxFailingAddrs {
			break
		}
		delete(f.addrs, k)
	}
}

// clientKey is the address remoteAddr counts under: IPv4, or its IPv6 /64.
func clientKey(remoteAddr string) (netip.Prefix, bool) {
	ip, ok := addrOf(remoteAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p, true
}

// retryAfter is d in whole seconds for Retry-After, at least 1.
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
