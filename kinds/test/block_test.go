package test

import (
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

// A test that ended early (by hand, a precision stop, a cap without a
// decision) carries its anytime-valid interval in both layouts; the
// control, an SPRT that reached its bound, keeps the layouts unchanged.
func TestBlockShowsAnytimeIntervalOfAnEarlyStop(t *testing.T) {
	job := func(state arbiterv1.JobState, sprtState string, mark func(*arbiterv1.MatchProgress)) *arbiterv1.Job {
		mp := &arbiterv1.MatchProgress{Games: 64, Wins: 25, Draws: 3, Losses: 36, SprtState: sprtState,
			Pentanomial: &arbiterv1.Pentanomial{Ll: 11, Ld: 1, Dd: 13, Wd: 2, Ww: 5},
			Anytime:     &arbiterv1.AnytimeInterval{Level: 0.95, EloLow: -224.72, EloHigh: 93.48}}
		if mark != nil {
			mark(mp)
		}
		return &arbiterv1.Job{JobId: "s1", Kind: jobkind.SPRT, State: state, MatchProgress: mp,
			Match: &arbiterv1.MatchSpec{Sprt: &arbiterv1.SprtParams{Elo0: 0, Elo1: 2, Model: "normalized"}}}
	}
	for _, c := range []struct {
		name string
		j    *arbiterv1.Job
		why  string
	}{
		{"by hand", job(arbiterv1.JobState_JOB_STATE_CANCELLED, "continue", func(mp *arbiterv1.MatchProgress) { mp.StoppedByHand = true }), "stopped by hand"},
		{"precision", job(arbiterv1.JobState_JOB_STATE_DONE, "continue", func(mp *arbiterv1.MatchProgress) { mp.StoppedByPrecision = true }), "precision stop"},
		{"cap", job(arbiterv1.JobState_JOB_STATE_DONE, "continue", nil), "game cap reached"},
	} {
		ob, ft := resultblock.Of(c.j, resultblock.OpenBench, ""), resultblock.Of(c.j, resultblock.Fishtest, "")
		if want := "Any   | [-224.72, 93.48] (95% anytime-valid; " + c.why + ")"; !strings.Contains(ob, want) {
			t.Errorf("%s: OpenBench block lacks %q:\n%s", c.name, want, ob)
		}
		if want := "Anytime-valid ELO (95%): [-224.72, 93.48] (" + c.why + ")"; !strings.Contains(ft, want) {
			t.Errorf("%s: Fishtest block lacks %q:\n%s", c.name, want, ft)
		}
	}
	decided := job(arbiterv1.JobState_JOB_STATE_DONE, "rejected", nil)
	for _, s := range []resultblock.Style{resultblock.OpenBench, resultblock.Fishtest} {
		if b := resultblock.Of(decided, s, ""); strings.Contains(b, "nytime") || strings.Contains(b, "Any ") {
			t.Errorf("an SPRT that reached its bound shows an anytime line in the %s block:\n%s", s, b)
		}
	}
}
