package perftjob

import (
	"slices"

	"github.com/arbiter-chess/arbiter/engine"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// owner is the identity a run counts for. Runs stored before identities
// existed count each worker as its own identity.
func owner(r store.Run) string {
	if r.Owner == "" {
		return "legacy:" + r.WorkerID
	}
	return r.Owner
}

// verdict is what the runs of one unit add up to.
type verdict struct {
	settled  bool
	counts   []engine.Count // the agreed counts when settled
	agreeing int            // identities whose runs agree with counts
	want     int            // further runs wanted (0 when settled or failed)
	disputed bool           // some runs disagree
	failed   bool           // maxRuns reached without a majority
}

// judge settles a unit from its runs. required is 1, or 2 for a verified
// unit. While all runs agree, the unit is settled once `required` runs
// exist. Once runs disagree (a verification mismatch, or a late duplicate
// that differs) the unit needs a value backed by at least two runs and by
// more runs than any other value: a third run settles a 1-to-1 dispute.
//
// Runs are counted by identity, not by worker: one credential's workers are
// one witness however many of them ran the unit, so no identity can verify
// or outvote on its own.
func judge(runs []store.Run, required, maxRuns int) verdict {
	type group struct {
		counts []engine.Count
		owners map[string]bool
		n      int
	}
	var groups []group
	for _, r := range runs {
		found := false
		for i := range groups {
			if slices.Equal(groups[i].counts, r.Counts) {
				if !groups[i].owners[owner(r)] {
					groups[i].owners[owner(r)] = true
					groups[i].n++
				}
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, group{counts: r.Counts, owners: map[string]bool{owner(r): true}, n: 1})
		}
	}
	switch len(groups) {
	case 0:
		return verdict{want: required}
	case 1:
		if groups[0].n >= required {
			return verdict{settled: true, counts: groups[0].counts, agreeing: groups[0].n}
		}
		return verdict{want: required - groups[0].n}
	}
	best, second := 0, 0
	for i, g := range groups {
		if g.n > groups[best].n {
			best = i
		}
	}
	for i, g := range groups {
		if i != best && g.n > second {
			second = g.n
		}
	}
	v := verdict{disputed: true}
	if groups[best].n >= 2 && groups[best].n > second {
		v.settled, v.counts, v.agreeing = true, groups[best].counts, groups[best].n
		return v
	}
	if len(runs) >= maxRuns {
		v.failed = true
		return v
	}
	v.want = 1
	return v
}
