package gamepair

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Trust between worker identities. An identity is what a worker's
// credential resolves to: an admin-made worker credential's name, or the
// account behind a token minted on /account (every token of one account
// is one identity, so an account cannot replay its own batches).
//
// Invariants, kept here and in crosscheck.go:
//
//   - An identity is trusted when an admin vouched for it (made its
//     credential: Trust.Vouched) or when TrustThreshold of its batches
//     were confirmed move for move by a replay of a trusted identity, and
//     it was never found lying. Nothing else earns trust: not games
//     played, not time connected, not the word of another untrusted
//     identity (two newcomers agreeing prove nothing, they may be one
//     person with two accounts).
//   - An untrusted identity's batches never count unconfirmed: in a test
//     whose games a replay can reproduce (fixed nodes, deterministic
//     engines: Settings.CrossCheckable) every one is held until a trusted
//     identity replays it; of any other job (clock tests, SPSA tunes) it
//     gets no batch at all, because nothing there could confirm its games.
//   - An identity found lying (its games contradicted by a trusted
//     identity's replay) is stored as a liar and is never trusted again,
//     whatever it agreed before; an admin revokes its credential.
//
// Trust is stored (store.TrustRecords, worker_trust) and loaded when the
// coordinator starts; this registry is the one place that answers "is
// this identity trusted", for every game workload.

// TrustThreshold is the number of an identity's batches a trusted
// identity must confirm before it is trusted. Why 10: a worker that lies
// on a share f of its batches survives n confirmed batches with
// probability (1-f)^n; at 10 one that lies on every other batch is caught
// with probability 0.999, one that lies on a third of them with 0.98, and
// one that always lies at once. Past the threshold its batches are
// replayed at --replay-fraction, so a trusted liar still meets a replay
// on average every 1/fraction batches. The price of 10 is small: a
// newcomer's first 10 batches cost a replay each (at the default batch of
// 30 seconds, five minutes of another worker's time, once per identity,
// not per test).
const TrustThreshold = 10

// Trust is the registry of every identity's trust. Safe for concurrent
// use; a nil *Trust trusts every identity (unit tests of scheduling and
// counting that need no trust; the coordinator always makes one).
type Trust struct {
	store *store.Store
	log   *zap.Logger
	// vouched reports whether an admin made identity's credential.
	vouched func(identity string) bool

	mu   sync.Mutex
	recs map[string]*store.TrustRecord
}

// NewTrust loads the stored trust. vouched says which identities an admin
// vouched for (nil: none).
func NewTrust(ctx context.Context, st *store.Store, vouched func(identity string) bool, log *zap.Logger) (*Trust, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if vouched == nil {
		vouched = func(string) bool { return false }
	}
	t := &Trust{store: st, log: log, vouched: vouched, recs: map[string]*store.TrustRecord{}}
	if st != nil {
		recs, err := st.TrustRecords(ctx)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			t.recs[recs[i].Identity] = &recs[i]
		}
	}
	return t, nil
}

// TrustLevel is what pages show of an identity's trust.
type TrustLevel struct {
	Identity string
	Trusted  bool
	Vouched  bool  // an admin made its credential
	Agreed   int64 // batches confirmed by a trusted identity's replay
	Liar     bool
	Reason   string // why it was found lying
}

// Level is identity's trust now.
func (t *Trust) Level(identity string) TrustLevel {
	if t == nil {
		return TrustLevel{Identity: identity, Trusted: true, Vouched: true}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.levelLocked(identity)
}

func (t *Trust) levelLocked(identity string) TrustLevel {
	l := TrustLevel{Identity: identity, Vouched: t.vouched(identity)}
	if r := t.recs[identity]; r != nil {
		l.Agreed, l.Liar, l.Reason = r.Agreed, !r.LiedAt.IsZero(), r.Reason
	}
	l.Trusted = !l.Liar && (l.Vouched || l.Agreed >= TrustThreshold)
	return l
}

// Trusted reports whether identity is trusted.
func (t *Trust) Trusted(identity string) bool { return t.Level(identity).Trusted }

// rank orders identities by earned trust for a mismatch: a liar lowest,
// then by confirmed batches, vouched highest.
func (t *Trust) rank(identity string) int64 {
	l := t.Level(identity)
	switch {
	case l.Liar:
		return -1
	case l.Vouched:
		return 1 << 62
	}
	return l.Agreed
}

// Confirmed records that a trusted identity's replay confirmed a batch of
// identity: one step towards trust. The store write is its own (losing
// it in a crash loses one step, never grants one).
func (t *Trust) Confirmed(ctx context.Context, identity string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	r := t.recs[identity]
	if r == nil {
		r = &store.TrustRecord{Identity: identity}
		t.recs[identity] = r
	}
	r.Agreed++
	now := t.levelLocked(identity)
	t.mu.Unlock()
	if now.Trusted && !now.Vouched && now.Agreed == TrustThreshold {
		t.log.Info("identity trusted: its batches were confirmed by trusted replays", zap.String("identity", identity),
			zap.Int64("confirmed", now.Agreed))
	}
	if t.store != nil {
		if err := t.store.AddAgreed(ctx, identity, 1); err != nil {
			t.log.Error("trust not stored", zap.String("identity", identity), zap.Error(err))
		}
	}
}

// DeclareLiar stores an admin's verdict that identity lied: it is never
// trusted again (the jobs it took part in are purged by each Set's
// DeclareLiar).
func (t *Trust) DeclareLiar(ctx context.Context, identity, reason string, at time.Time) error {
	if err := t.store.MarkLiar(ctx, identity, reason, at); err != nil {
		return err
	}
	t.markLiar(identity, reason, at)
	return nil
}

// markLiar records in memory that identity was found lying (the store
// has it from the purge's transaction).
func (t *Trust) markLiar(identity, reason string, at time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.recs[identity]
	if r == nil {
		r = &store.TrustRecord{Identity: identity}
		t.recs[identity] = r
	}
	r.LiedAt, r.Reason = at, reason
}

// Levels is the trust of every identity the registry has a record of,
// and of those named, sorted by identity.
func (t *Trust) Levels(names ...string) []TrustLevel {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	var out []TrustLevel
	for _, id := range names {
		if !seen[id] {
			seen[id] = true
			out = append(out, t.levelLocked(id))
		}
	}
	for id := range t.recs {
		if !seen[id] {
			seen[id] = true
			out = append(out, t.levelLocked(id))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Identity < out[j].Identity })
	return out
}
