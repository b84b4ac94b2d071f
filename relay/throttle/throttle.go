// Package throttle limits failed sign-ins: each key (a client address, a
// user key) has a budget of failures that leaks back over time (GCRA, a
// token bucket without a timer). Only failures spend it, so a club office
// behind one address, or a load test, signing in hundreds of members is
// never slowed down; a guesser is.
//
// The budget lives in memory for one instance (Memory) or in Redis for a
// cluster (Redis); both pass one conformance suite.
package throttle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"time"
)

// Limit is a budget of failures: Burst of them at once, coming back one
// every Period/Burst, so that the whole budget is back Period after the
// last failure.
type Limit struct {
	Burst  int
	Period time.Duration
}

func (l Limit) valid() bool { return l.Burst > 0 && l.Period > 0 }

// interval is how long one failure takes to leak back.
func (l Limit) interval() time.Duration { return l.Period / time.Duration(l.Burst) }

// ErrInvalidLimit is returned for a Limit without a positive Burst and Period.
var ErrInvalidLimit = errors.New("throttle: limit needs a positive burst and period")

// Decision is the answer of Allow.
type Decision struct {
	// Allowed is true while the key has budget for at least one more failure.
	Allowed bool
	// RetryAfter, when not allowed, is how long until it has again.
	RetryAfter time.Duration
}

// Limiter keeps failure budgets per key.
type Limiter interface {
	// Allow reports whether key may still fail once under l. It spends nothing.
	Allow(ctx context.Context, key string, l Limit) (Decision, error)
	// Fail spends one failure of key's budget under l. A key already over
	// its budget stays there; nothing more is recorded.
	Fail(ctx context.Context, key string, l Limit) error
}

// decide turns the time until a key's budget is full again (GCRA's
// "theoretical arrival time" minus now) into a Decision: one more failure
// fits while that time is at most Burst-1 intervals.
func decide(untilFull time.Duration, l Limit) Decision {
	room := l.interval() * time.Duration(l.Burst-1)
	if untilFull <= room {
		return Decision{Allowed: true}
	}
	return Decision{RetryAfter: untilFull - room}
}

// SignInConfig holds the budgets of failed sign-ins. Zero fields take the
// defaults.
type SignInConfig struct {
	// PerUserKey bounds guesses at one member's hash from anywhere.
	// Default 10 per 15 minutes: a person retyping or re-pasting a link
	// gets it right within a few tries, and 10 leaves room for a second
	// person (a parent) trying the same link; a guesser is held to one
	// guess every 90 seconds, hopeless against a 128-bit hash.
	PerUserKey Limit
	// PerAddress bounds one client address (an IPv6 /64) across user keys.
	// Default 50 per 15 minutes: several members behind one club or family
	// router can each mistype a few times; a scanner trying many user keys
	// is held to one failure every 18 seconds.
	PerAddress Limit
}

// Default budgets; see SignInConfig for the reasons.
var (
	DefaultPerUserKey = Limit{Burst: 10, Period: 15 * time.Minute}
	DefaultPerAddress = Limit{Burst: 50, Period: 15 * time.Minute}
)

// SignIn applies a SignInConfig on a Limiter: a sign-in may be tried while
// both its address and its user key have budget, and a failed one spends
// from both.
type SignIn struct {
	limiter Limiter
	cfg     SignInConfig
}

// NewSignIn returns the sign-in throttle on l; a zero or invalid field of
// cfg takes its default.
func NewSignIn(l Limiter, cfg SignInConfig) *SignIn {
	if !cfg.PerUserKey.valid() {
		cfg.PerUserKey = DefaultPerUserKey
	}
	if !cfg.PerAddress.valid() {
		cfg.PerAddress = DefaultPerAddress
	}
	return &SignIn{limiter: l, cfg: cfg}
}

// Check reports whether a sign-in from addr for userKey may be tried. When
// either budget is spent it is refused, with the longer wait. An empty
// userKey checks the address only.
func (s *SignIn) Check(ctx context.Context, addr, userKey string) (Decision, error) {
	d, err := s.limiter.Allow(ctx, AddressKey(addr), s.cfg.PerAddress)
	if err != nil || userKey == "" {
		return d, err
	}
	du, err := s.limiter.Allow(ctx, UserKeyKey(userKey), s.cfg.PerUserKey)
	if err != nil {
		return du, err
	}
	if !du.Allowed {
		d.Allowed = false
		d.RetryAfter = max(d.RetryAfter, du.RetryAfter)
	}
	return d, nil
}

// Failed spends one failure from addr's budget and, when given, userKey's.
func (s *SignIn) Failed(ctx context.Context, addr, userKey string) error {
	err := s.limiter.Fail(ctx, AddressKey(addr), s.cfg.PerAddress)
	if userKey != "" {
		err = errors.Join(err, s.limiter.Fail(ctx, UserKeyKey(userKey), s.cfg.PerUserKey))
	}
	return err
}

// AddressKey is the budget key of a client address. IPv6 addresses count
// per /64, the block one subscriber usually holds: otherwise every address
// of it would be a fresh budget. Anything that is not an IP is kept, cut
// to 64 bytes.
func AddressKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		if len(addr) > 64 {
			addr = addr[:64]
		}
		return "addr:" + addr
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail for an IPv6 address
		return "addr:" + p.String()
	}
	return "addr:" + a.String()
}

// UserKeyKey is the budget key of a user key: a digest, so that any user
// key (however long, whatever its bytes) makes a short key of its own.
func UserKeyKey(userKey string) string {
	sum := sha256.Sum256([]byte(userKey))
	return "user:" + hex.EncodeToString(sum[:16])
}
