package jobreport

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestBlockLayouts checks the result block line by line against the
// layouts OpenBench and Fishtest print, for an SPRT test, a fixed-games
// match and a tune.
func TestBlockLayouts(t *testing.T) {
	jobs := listJobs()
	sprtTest, tune := jobs[0], jobs[3]
	sprtTest.Match.EngineA.Options = map[string]string{"Hash": "16", "Threads": "1"}
	clock := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{Base: durationpb.New(8 * time.Second), Increment: durationpb.New(80 * time.Millisecond)}}}
	match := &arbiterv1.Job{JobId: "m1", Kind: "match", State: arbiterv1.JobState_JOB_STATE_DONE,
		Match: &arbiterv1.MatchSpec{EngineA: &arbiterv1.EngineSpec{Name: "new"}, EngineB: &arbiterv1.EngineSpec{Name: "base"}, TimeControl: clock, Games: 40},
		MatchProgress: &arbiterv1.MatchProgress{Games: 40, Wins: 12, Draws: 20, Losses: 8, Elo: 34.9, EloCiLow: -20.1, EloCiHigh: 80.1, Los: 0.812,
			Pentanomial: &arbiterv1.Pentanomial{Ll: 1, Ld: 3, Dd: 8, Wd: 5, Ww: 3}}}
	for _, c := range []struct {
		name  string
		job   *arbiterv1.Job
		style BlockStyle
		link  string
		want  string
	}{
		{"sprt openbench", sprtTest, BlockOpenBench, "http://farm/tests/s1",
			"Elo   | 34.90 +- 55.20 (95%)\n" +
				"SPRT  | nodes=2000 Threads=1 Hash=16MB\n" +
				"LLR   | 0.42 (-2.94, 2.94) [0.00, 5.00]\n" +
				"Games | N: 40 W: 12 L: 8 D: 20\n" +
				"Penta | [1, 3, 8, 5, 3]\n" +
				"http://farm/tests/s1\n"},
		{"sprt fishtest", sprtTest, BlockFishtest, "",
			"LLR: 0.42 (-2.94,2.94) <0.00,5.00>\n" +
				"Total: 40 W: 12 L: 8 D: 20\n" +
				"Ptnml(0-2): 1, 3, 8, 5, 3\n"},
		{"match openbench", match, BlockOpenBench, "",
			"Elo   | 34.90 +- 55.00 (95%)\n" +
				"Conf  | 8+0.08s Threads=1\n" +
				"Games | N: 40 W: 12 L: 8 D: 20\n" +
				"Penta | [1, 3, 8, 5, 3]\n"},
		{"match fishtest", match, BlockFishtest, "",
			"ELO: 34.90 +-55.0 (95%) LOS: 81.2%\n" +
				"Total: 40 W: 12 L: 8 D: 20\n" +
				"Ptnml(0-2): 1, 3, 8, 5, 3\n"},
		{"tune openbench", tune, BlockOpenBench, "",
			"SPSA  | nodes=2000 Threads=1\n" +
				"Iters | 7/0\n" +
				"Games | N: 112 W: 0 L: 0 D: 0\n" +
				"RFPMargin, 84\n"},
		{"tune fishtest", tune, BlockFishtest, "",
			"7/0 iterations\n" +
				"112/2000 games played\n"},
	} {
		if got := Block(c.job, c.style, c.link); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	for _, s := range []string{"", "openbench", "Fishtest"} {
		if _, err := ParseBlockStyle(s); err != nil {
			t.Errorf("style %q: %v", s, err)
		}
	}
	if _, err := ParseBlockStyle("cutechess"); err == nil {
		t.Error("style cutechess: no error")
	}
}
