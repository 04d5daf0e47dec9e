package test

import (
	"slices"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
)

// What a test is found by: its tags and notes (part of its spec, so they
// are stored and copied with it), and what lists filter on, described
// from memory (core.Describer) so that a list over every stored test
// builds no snapshot.

// Verdicts of a test as lists filter them.
const (
	VerdictPassed = "passed" // SPRT: H1 accepted
	VerdictFailed = "failed" // SPRT: H0 accepted
	VerdictNone   = "none"   // SPRT without a decision (running, capped, stopped by hand)
)

// checkFindable checks and normalises a submitted spec's tags, notes and
// link to the test it copies.
func (w *Workload) checkFindable(spec *arbiterv1.MatchSpec) error {
	tags, err := testview.CheckTags(spec.GetTags())
	if err != nil {
		return err
	}
	spec.Tags = tags
	if err := testview.CheckNotes(spec.GetNotes()); err != nil {
		return err
	}
	if from := spec.GetRescheduledFrom(); from != "" {
		w.Mu.Lock()
		_, ok := w.Jobs[from]
		w.Mu.Unlock()
		if !ok {
			return apierr.Invalid("rescheduled_from: %s is not a test of this coordinator", apierr.Q(from))
		}
	}
	return nil
}

// describe adds what lists find a test by (gamepair.Hooks.Describe).
// Lists call it for every stored test, so what it gives is made once per
// spec (findCache) and shared, never copied. Caller holds mu.
func (w *Workload) describe(t *test, info *core.JobInfo) {
	if t.find == nil {
		t.find = newFindCache(t)
	}
	info.Engines = t.find.engines
	info.TimeControl = t.find.tc
	info.Tags = t.spec.GetTags()
	info.Notes = t.spec.GetNotes()
	info.Text = t.find.text
	info.Verdict = t.verdict()
}

// findCache is what describe gives of a test's spec, made once: its
// engines, its time control as lists show it, and its searchable text in
// lower case. A change of the spec (Modify) drops it.
type findCache struct {
	engines []string
	tc      string
	text    string
}

func newFindCache(t *test) *findCache {
	c := &findCache{engines: []string{t.spec.GetEngineA().GetName(), t.spec.GetEngineB().GetName()},
		tc: matchspec.DescribeLimits(t.spec.GetTimeControl(), t.spec.GetEngineA(), t.spec.GetEngineB())}
	c.text = core.SearchText(t.Rec.ID, t.Rec.Submitter, t.spec.GetNotes(), append(slices.Clone(c.engines), t.spec.GetTags()...))
	return c
}

// verdict is the test's verdict as lists filter it ("" for a match).
func (t *test) verdict() string {
	switch {
	case t.seq == nil:
		return ""
	case t.seq.State == sprt.Accepted:
		return VerdictPassed
	case t.seq.State == sprt.Rejected:
		return VerdictFailed
	}
	return VerdictNone
}

// stoppedByHand reports whether t is an SPRT that was cancelled before a
// bound: its error rates no longer hold. Caller holds mu.
func (t *test) stoppedByHand() bool {
	return t.seq != nil && t.seq.State == sprt.Continue && t.Rec.State == "cancelled"
}

// noteCopy records that test id copies test from (after it is stored).
func (w *Workload) noteCopy(from, id string) {
	if from == "" {
		return
	}
	w.Mu.Lock()
	defer w.Mu.Unlock()
	if w.copies == nil {
		w.copies = map[string][]string{}
	}
	if !slices.Contains(w.copies[from], id) {
		w.copies[from] = append(w.copies[from], id)
	}
}
