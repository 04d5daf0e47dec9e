package perft

import (
	"slices"

	"github.com/arbiter-chess/arbiter/engine"
)

// owner is the identity a run counts for. Runs stored before identities
// existed count each worker as its own identity.
func owner(r Run) string {
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
	// Cross-checked units (crosscheck.go): the run wanted is a
	// cross-check run; a witness cross-check run agrees with counts; a
	// cross-check run and ours counted different nodes.
	cross, crossAgreed, crossDisputed bool
}

// judge settles a unit from its runs. required is 1, or 2 for a verified
// unit. While all runs agree, the unit is settled once `required` runs
// exist. Once runs disagree (a verification mismatch, or a late duplicate
// that differs) the unit needs a value backed by at least two runs and by
// more runs than any other value: a third run settles a 1-to-1 dispute.
//
// Runs are counted by identity, not by worker: one credential's workers are
// one witness however many of them ran the unit, so no identity can verify
// or outvote on its own. An identity in distrusted (outvoted in a settled
// dispute of the job) is no witness at all: its runs still show a dispute,
// but settle nothing, so a unit only it ran is computed again.
func judge(runs []Run, required, maxRuns int, distrusted map[string]bool) verdict {
	type group struct {
		counts []engine.Count
		owners map[string]bool
		n      int
	}
	var groups []group
	for _, r := range runs {
		found := false
		witness := !distrusted[owner(r)]
		for i := range groups {
			if slices.Equal(groups[i].counts, r.Counts) {
				if !groups[i].owners[owner(r)] {
					groups[i].owners[owner(r)] = true
					if witness {
						groups[i].n++
					}
				}
				found = true
				break
			}
		}
		if !found {
			g := group{counts: r.Counts, owners: map[string]bool{owner(r): true}}
			if witness {
				g.n = 1
			}
			groups = append(groups, g)
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
	// Runs disagree. When only one value has witnesses (the others are
	// distrusted identities'), it settles as an undisputed value would.
	witnessed := -1
	for i, g := range groups {
		if g.n > 0 {
			if witnessed >= 0 {
				witnessed = -2
				break
			}
			witnessed = i
		}
	}
	if witnessed >= 0 && groups[witnessed].n >= required {
		g := groups[witnessed]
		return verdict{settled: true, counts: g.counts, agreeing: g.n, disputed: true}
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

// outvoted returns the identities whose runs of a unit lost a settled
// dispute (v is the unit's verdict on runs): each ran counts the majority
// of independent identities contradicted.
func outvoted(runs []Run, v verdict) []string {
	return outvotedUnit(runs, v, 1)
}
