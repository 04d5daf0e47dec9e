package perft

// Cross-check by another program (PerftSpec.cross_check): a sampled share
// of a job's units is counted again by an engine the workers offer with
// arbiter worker --verify-engine NAME=... (its `go perft` node counts),
// on a worker of another identity than the ones that ran the unit.
//
// A cross-check run (Run.Program set) carries one node count per
// position, never the statistics: it is a witness of node counts only. A
// sampled unit settles once our generator's runs settle it (judge) and a
// witness cross-check run agrees with their node counts. When the counts
// differ, every run votes on node counts by identity, one vote each, and
// a further run of our generator by a third identity breaks the tie: the
// value with two identities and more than any other settles the unit,
// with the full counts of our runs among them, and the identities that
// counted otherwise are outvoted (distrusted for the job, as judge's
// disputes). The job's totals are always our generator's counts.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// DefaultCrossCheckFraction is the share of units cross-checked when a
// job names a program and no fraction.
const DefaultCrossCheckFraction = 0.05

// MaxCrossCheckName bounds a cross-check program's name.
const MaxCrossCheckName = 64

// crossSampled decides whether unit i of a job is cross-checked: a keyed
// hash of its index under the job's secret seed, below fraction. The seed
// stays on the coordinator, so no worker can tell which of its units will
// be checked; the choice is reproducible from the stored seed.
func crossSampled(seed []byte, i int, fraction float64) bool {
	if fraction >= 1 {
		return true
	}
	if fraction <= 0 {
		return false
	}
	mac := hmac.New(sha256.New, seed)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	mac.Write(b[:])
	x := binary.BigEndian.Uint64(mac.Sum(nil)[:8])
	return float64(x>>11)/float64(1<<53) < fraction
}

// checkCrossCheck validates a spec's cross-check program and fraction and
// returns the fraction and the slices to use: another program counts
// whole trees, so a cross-checked job is not sliced.
func checkCrossCheck(name string, fraction float64, slices int) (float64, int, error) {
	if name == "" {
		if fraction != 0 {
			return 0, 0, apierr.Invalid("cross-check fraction %v without a cross-check program (--cross-check NAME)", fraction)
		}
		return 0, slices, nil
	}
	if len(name) > MaxCrossCheckName || !validEngineName(name) {
		return 0, 0, apierr.Invalid("cross-check program %s: a --verify-engine name of at most %d letters, digits, '.', '_' or '-'", apierr.Q(name), MaxCrossCheckName)
	}
	if math.IsNaN(fraction) || fraction < 0 || fraction > 1 {
		return 0, 0, apierr.Invalid("cross-check fraction %v: must be above 0 and at most 1 (--cross-check-fraction)", fraction)
	}
	if slices > 1 {
		return 0, 0, apierr.Invalid("slices %d with cross-check %s: another program counts whole trees, so a cross-checked job is not sliced (leave slices unset or 1)", slices, name)
	}
	if fraction == 0 {
		fraction = DefaultCrossCheckFraction
	}
	return fraction, 1, nil
}

func validEngineName(s string) bool {
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return s != ""
}

func newSeed() string { return randomHex(16) }

func decodeSeed(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		return []byte(s)
	}
	return b
}

// crossCapable reports whether wk runs j's cross-check program.
func crossCapable(j *job, wk *core.Worker) bool {
	return j.rec.CrossCheck != "" && wk.Has(capability.PerftCrossCheck) && wk.Has(capability.VerifyEngine(j.rec.CrossCheck))
}

// nodesOf is a run's node count per position: a cross-check run's counts,
// or every width-th count of ours.
func nodesOf(r Run, width int) []engine.Count {
	if r.Program != "" || width <= 1 {
		return r.Counts
	}
	return nodesOfCounts(r.Counts, width)
}

func nodesOfCounts(counts []engine.Count, width int) []engine.Count {
	if width <= 1 {
		return counts
	}
	out := make([]engine.Count, 0, len(counts)/width)
	for i := 0; i < len(counts); i += width {
		out = append(out, counts[i])
	}
	return out
}

// judgeUnit is u's verdict on runs: judge's, for a unit that is not
// cross-checked; for one that is, see the comment at the top of the file.
func judgeUnit(u *unit, runs []Run, maxRuns int, distrusted map[string]bool) verdict {
	if !u.rec.CrossCheck {
		return judge(runs, required(u), maxRuns, distrusted)
	}
	var ours, theirs []Run
	for _, r := range runs {
		if r.Program == "" {
			ours = append(ours, r)
		} else {
			theirs = append(theirs, r)
		}
	}
	v := judge(ours, required(u), maxRuns, distrusted)
	width := u.job.width()
	type group struct {
		nodes  []engine.Count
		owners map[string]bool
		n      int
		ours   []Run
		cross  bool // a witness cross-check run is in it
	}
	var groups []*group
	for _, r := range runs {
		nodes := nodesOf(r, width)
		var g *group
		for _, h := range groups {
			if slices.Equal(h.nodes, nodes) {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{nodes: nodes, owners: map[string]bool{}}
			groups = append(groups, g)
		}
		witness := !distrusted[owner(r)]
		if witness && !g.owners[owner(r)] {
			g.n++
		}
		g.owners[owner(r)] = true
		if r.Program == "" {
			g.ours = append(g.ours, r)
		} else if witness {
			g.cross = true
		}
	}
	if len(groups) <= 1 {
		// Every run counts the same nodes: ours decide, once a witness
		// cross-check run is in.
		switch {
		case !v.settled:
			return v
		case len(groups) == 1 && groups[0].cross:
			v.crossAgreed = true
			return v
		}
		return verdict{want: 1, cross: true, disputed: v.disputed}
	}
	best, second := groups[0], 0
	for _, g := range groups[1:] {
		if g.n > best.n {
			best = g
		}
	}
	for _, g := range groups {
		if g != best && g.n > second {
			second = g.n
		}
	}
	out := verdict{disputed: true, crossDisputed: true}
	if best.n >= 2 && best.n > second && len(best.ours) > 0 {
		if vb := judge(best.ours, 1, maxRuns, distrusted); vb.settled {
			out.settled, out.counts, out.agreeing, out.crossAgreed = true, vb.counts, vb.agreeing, best.cross
			return out
		}
	}
	if len(runs) >= maxRuns {
		out.failed = true
		return out
	}
	out.want = 1 // one more of ours, by a third identity
	return out
}

// outvotedUnit is outvoted for a unit of width counts per position:
// cross-check runs are compared on node counts.
func outvotedUnit(runs []Run, v verdict, width int) []string {
	if !v.settled || !v.disputed {
		return nil
	}
	nodes := nodesOfCounts(v.counts, width)
	var out []string
	for _, r := range runs {
		differs := !slices.Equal(r.Counts, v.counts)
		if r.Program != "" {
			differs = !slices.Equal(r.Counts, nodes)
		}
		if differs && !slices.Contains(out, owner(r)) {
			out = append(out, owner(r))
		}
	}
	return out
}

// resultProgram is the program a result of wk for u counts with: "" for
// ours, or the job's cross-check program. The result's claim must match
// what wk's lease asked (or, for a lease this coordinator no longer
// holds in memory, be possible at all: a sampled unit of a job with that
// program, from a worker that offers it). Caller holds mu.
func resultProgram(u *unit, wk *core.Worker, claimed string) (string, error) {
	j := u.job
	if _, held := u.holders[wk.ID]; held {
		if want := u.crossHeld[wk.ID]; want != (claimed != "") || want && claimed != j.rec.CrossCheck {
			return "", malformed("unit %s: the lease asked for the counts of %s; the result says they are %s's",
				u.rec.ID, programName(want, j.rec.CrossCheck), programName(claimed != "", claimed))
		}
		return claimed, nil
	}
	if claimed == "" {
		return "", nil
	}
	if !u.rec.CrossCheck || claimed != j.rec.CrossCheck || !crossCapable(j, wk) {
		return "", malformed("unit %s: a result counted by %s, which this job does not cross-check with here", u.rec.ID, apierr.Q(claimed))
	}
	return claimed, nil
}

func programName(cross bool, name string) string {
	if !cross {
		return "the embedded generator"
	}
	return "the program " + apierr.Q(name)
}

// crossView is what j's cross-check did so far: units sampled, checked and
// agreeing, cross-check runs by worker, and each unit where the program
// and our generator counted different nodes. nil when j has no
// cross-check. Caller holds mu (or owns j).
func crossView(j *job) *arbiterv1.PerftCrossCheck {
	if j.rec.CrossCheck == "" {
		return nil
	}
	if j.crossDone != nil {
		return j.crossDone
	}
	out := &arbiterv1.PerftCrossCheck{Engine: j.rec.CrossCheck, Fraction: j.rec.CrossCheckFraction, RunsByWorker: map[string]uint64{}}
	width, depth := j.width(), uint32(j.rec.Depth-j.rec.SplitPly)
	for _, u := range j.units {
		if !u.rec.CrossCheck {
			continue
		}
		out.UnitsSampled++
		checked := false
		for _, x := range u.runs {
			if x.Program == "" {
				continue
			}
			checked = true
			out.RunsByWorker[x.WorkerID]++
			if m := crossMismatch(u, x, width, depth); m != nil {
				out.Mismatches = append(out.Mismatches, m)
			}
		}
		if checked {
			out.UnitsChecked++
		}
		if u.v.settled && u.v.crossAgreed {
			out.UnitsAgreed++
		}
	}
	return out
}

// crossMismatch is the first position where cross-check run x and one of
// u's runs of ours count different nodes; nil when every one agrees.
func crossMismatch(u *unit, x Run, width int, depth uint32) *arbiterv1.PerftCrossCheckMismatch {
	theirs := x.Counts
	for _, r := range u.runs {
		if r.Program != "" {
			continue
		}
		ours := nodesOf(r, width)
		for i := range ours {
			p := u.rec.First + i
			if i >= len(theirs) || p >= len(u.job.positions) || ours[i] == theirs[i] {
				continue
			}
			m := &arbiterv1.PerftCrossCheckMismatch{UnitId: u.rec.ID, Fen: u.job.positions[p].FEN, Depth: depth,
				Ours: ours[i].String(), OurWorker: r.WorkerID, OurIdentity: owner(r),
				Theirs: theirs[i].String(), TheirWorker: x.WorkerID, TheirIdentity: owner(x),
				Settled: u.v.settled}
			m.Outvoted = outvotedUnit(u.runs, u.v, width)
			return m
		}
	}
	return nil
}

// loadCrossView rebuilds a finished job's cross-check view from its
// positions, units and runs, which then leave memory again.
func (w *Workload) loadCrossView(ctx context.Context, j *job) error {
	positions, err := loadPositions(ctx, w.store, j.rec.ID)
	if err != nil {
		return fmt.Errorf("perft: job %s positions: %w", j.rec.ID, err)
	}
	recs, byUnit, err := w.unitsAndRuns(ctx, j.rec.ID)
	if err != nil {
		return err
	}
	full := &job{rec: j.rec, positions: positions}
	for _, ur := range recs {
		if ur.First < 0 || ur.End > len(positions) || ur.First >= ur.End {
			return fmt.Errorf("perft: job %s unit %s: positions [%d, %d) outside the job's %d", j.rec.ID, ur.ID, ur.First, ur.End, len(positions))
		}
		full.units = append(full.units, &unit{job: full, rec: ur, runs: byUnit[ur.ID]})
	}
	full.findDistrusted(w.cfg.MaxRuns)
	for _, u := range full.units {
		u.v = judgeUnit(u, u.runs, w.cfg.MaxRuns, full.distrusted)
	}
	j.crossDone = crossView(full)
	return nil
}

// oursSuffice reports whether u is a sampled unit that waits only for its
// cross-check, our runs already settling it on counts: a further run of
// ours that agrees adds nothing. Caller holds mu.
func (u *unit) oursSuffice(counts []engine.Count, maxRuns int) bool {
	if !u.rec.CrossCheck || !u.v.cross {
		return false
	}
	var ours []Run
	for _, r := range u.runs {
		if r.Program == "" {
			ours = append(ours, r)
		}
	}
	v := judge(ours, required(u), maxRuns, u.job.distrusted)
	return v.settled && slices.Equal(v.counts, counts)
}

// clip shortens s to at most n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
