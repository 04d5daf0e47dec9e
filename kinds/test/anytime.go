package test

// A test's stops beyond its SPRT and its cap, and its group of takes:
//
//   - The anytime-valid interval (sprt.AnytimeInterval) is shown with every
//     test's progress, at 95%, or for a take of a group at 1 − 0.05/takes.
//   - --stop precision=ELO (MatchSpec.stop_precision_elo) ends a test once
//     that interval is narrower than ELO. Like the SPRT it is a function of
//     the committed counts only: next decides it on the counts after a
//     batch, in the same commit, and recount replays it over the kept
//     batches, so a restart or a purge stops the test exactly where it
//     stopped before.
//   - A group of takes (MatchSpec.group, group_takes) runs each take's SPRT
//     at alpha/takes (sprt.TakeParams, Bonferroni); every take declares the
//     same takes and family alpha, and a group holds at most its takes
//     (checked at submission, and again in the store write under
//     CommitMu, where creations are in order).

import (
	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// checkStopAndGroup validates spec's precision stop and group (the group
// name lower-cased in spec) and returns the design its SPRT runs: params,
// or for a take of a group params with alpha split over the takes.
func checkStopAndGroup(spec *arbiterv1.MatchSpec, params *sprt.Params) (*sprt.Params, error) {
	if v := spec.GetStopPrecisionElo(); v != 0 {
		if err := sprt.CheckPrecision("stop_precision_elo", v); err != nil {
			return nil, apierr.Invalid("%s", err.Error())
		}
	}
	takes := spec.GetGroupTakes()
	if spec.GetGroup() == "" {
		if takes != 0 {
			return nil, apierr.Invalid("group_takes: %d without a group", takes)
		}
		return params, nil
	}
	g, err := testview.CheckWord("group", spec.GetGroup())
	if err != nil {
		return nil, err
	}
	spec.Group = g
	if takes < 1 || takes > sprt.MaxTakes {
		return nil, apierr.Invalid("group_takes: %d is not in [1, %d] (declare the group's number of takes with its first)", takes, sprt.MaxTakes)
	}
	if params == nil {
		return nil, apierr.Invalid("group %s: a group of takes splits an SPRT's alpha; give SPRT bounds", apierr.Q(g))
	}
	take, err := sprt.TakeParams(*params, int(takes))
	if err != nil {
		return nil, apierr.Invalid("group %s: %s", apierr.Q(g), brief(err))
	}
	return &take, nil
}

// checkGroupRoom refuses a take whose group was declared otherwise or
// already holds its takes.
func (w *Workload) checkGroupRoom(spec *arbiterv1.MatchSpec) error {
	g := spec.GetGroup()
	if g == "" {
		return nil
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	n := 0
	for _, t := range w.Jobs {
		if t.spec.GetGroup() != g {
			continue
		}
		if t.spec.GetGroupTakes() != spec.GetGroupTakes() || t.spec.GetSprt().GetAlpha() != spec.GetSprt().GetAlpha() {
			return apierr.Invalid("group %s was declared with %d takes at alpha %g (test %s); this test says %d at alpha %g",
				apierr.Q(g), t.spec.GetGroupTakes(), t.spec.GetSprt().GetAlpha(), t.Rec.ID, spec.GetGroupTakes(), spec.GetSprt().GetAlpha())
		}
		n++
	}
	if n >= int(spec.GetGroupTakes()) {
		return apierr.Invalid("group %s already has its %d takes: a further take would break the group's error rate", apierr.Q(g), n)
	}
	return nil
}

// anytimeLevel is the coverage of t's anytime interval.
func (t *test) anytimeLevel() float64 {
	if t.spec.GetGroup() == "" {
		return sprt.DefaultAnytimeLevel
	}
	return sprt.TakeLevel(sprt.DefaultAnytimeLevel, int(t.spec.GetGroupTakes()))
}

// precisionStop reports whether t's precision stop ends it at penta (the
// counts after a batch).
func (t *test) precisionStop(penta sprt.Pentanomial) bool {
	width := t.spec.GetStopPrecisionElo()
	if width == 0 {
		return false
	}
	done, _, err := sprt.PrecisionReached(sprt.Results{Pentanomial: &penta}, width, t.anytimeLevel())
	return err == nil && done
}

// anytime is t's anytime interval at its counted pairs (nil before any),
// computed once per pentanomial. Caller holds mu.
func (t *test) anytime() *sprt.AnytimeElo {
	penta := t.Penta
	if penta.Pairs() == 0 {
		return nil
	}
	if t.anytimeCache != nil && t.anytimeCache.penta == penta {
		return &t.anytimeCache.interval
	}
	a, err := sprt.AnytimeInterval(sprt.Results{Pentanomial: &penta}, t.anytimeLevel())
	if err != nil {
		return nil
	}
	t.anytimeCache = &anytimeAt{penta: penta, interval: a}
	return &a
}

// anytimeAt is a test's anytime interval at a pentanomial.
type anytimeAt struct {
	penta    sprt.Pentanomial
	interval sprt.AnytimeElo
}

// fillAnytime sets mp's anytime interval, whether the precision stop
// ended t, and t's group of takes. Caller holds mu.
func (w *Workload) fillAnytime(t *test, mp *arbiterv1.MatchProgress) {
	if a := t.anytime(); a != nil {
		mp.Anytime = &arbiterv1.AnytimeInterval{Level: a.Level, EloLow: a.Elo[0], EloHigh: a.Elo[1], NeloLow: a.NElo[0], NeloHigh: a.NElo[1]}
		width := t.spec.GetStopPrecisionElo()
		mp.StoppedByPrecision = width > 0 && t.Rec.State == store.StateDone && a.Width() < width &&
			(t.seq == nil || t.seq.State == sprt.Continue)
	}
	mp.GroupTakes = w.groupTakes(t)
}

// groupTakes lists the takes of t's group in submission order (nil for a
// test of its own). Caller holds mu.
func (w *Workload) groupTakes(t *test) []*arbiterv1.GroupTake {
	g := t.spec.GetGroup()
	if g == "" {
		return nil
	}
	takes := w.testsWhere(func(o *test) bool { return o.spec.GetGroup() == g })
	out := make([]*arbiterv1.GroupTake, 0, len(takes))
	for _, o := range takes {
		gt := &arbiterv1.GroupTake{JobId: o.Rec.ID, Kind: o.Rec.Kind, State: o.Rec.State, Games: uint64(o.Results.Games())}
		if o.seq != nil {
			gt.SprtState, gt.Alpha = string(o.seq.State), o.seq.Params.Alpha
		}
		out = append(out, gt)
	}
	return out
}
