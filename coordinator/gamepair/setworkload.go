package gamepair

import (
	"context"
	"time"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// What the coordinator asks of every kind of job (package workload's
// interfaces), the same for every game workload.

// Needs is workload.Needer's Needs: a worker that plays game pairs (and
// the embedded engine when one of the job's engines is it) and fits both
// engines (FitsCaps). A job that none can start fails after the start
// timeout: its engines are the likely fault.
func (s *Set[J]) Needs(jobID string) (core.Need, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	j, ok := s.Jobs[jobID]
	if !ok {
		return core.Need{}, false
	}
	a, b := s.Hooks.Engines(j)
	adj := s.Hooks.Adjudication(j)
	n := core.Need{Caps: []string{capability.GamePair}, Fits: func(c core.Caps) string {
		if why := FitsCaps(a, b, c); why != "" {
			return why
		}
		return FitsTablebase(adj, c)
	},
		Barred: map[string]string{}, FailUnstarted: true}
	if matchspec.IsBuiltin(a) || matchspec.IsBuiltin(b) {
		n.Caps = append(n.Caps, capability.Builtin)
	}
	if ws := j.Base().Workers; ws != nil {
		for _, r := range ws.Rows(s.What, nil) {
			if r.GetExcluded() {
				n.Barred[r.GetWorkerId()] = r.GetReason()
			}
		}
	}
	return n, true
}

// Quarantined is workload.Quarantiner's Quarantined: what the last Load
// skipped (LoadProblems), for the store's quarantine.
func (s *Set[J]) Quarantined() []store.Quarantined {
	var out []store.Quarantined
	for _, p := range s.LoadProblems() {
		out = append(out, store.Quarantined{Kind: p.Kind, ID: p.ID, Error: p.Err.Error()})
	}
	return out
}

// Expire is workload.Retainer's Expire: the games of the jobs finished
// before cutoff are deleted (their counts, verdicts and updates stay), and
// their snapshots show none stored.
func (s *Set[J]) Expire(ctx context.Context, cutoff, now time.Time) ([]string, error) {
	ids, err := s.Store.ExpireGames(ctx, cutoff, now, s.GameTable)
	if err != nil {
		return nil, err
	}
	s.PGNsExpired(ids)
	return ids, nil
}
