package perft

import (
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

func runs(cs ...uint64) []Run {
	var out []Run
	for i, c := range cs {
		out = append(out, Run{Counts: []engine.Count{engine.CountOf(c)}, WorkerID: string(rune('a' + i))})
	}
	return out
}

func TestJudgeCountsIdentitiesNotWorkers(t *testing.T) {
	// Two workers of one identity agree: one witness, not verified.
	same := []Run{
		{WorkerID: "w1", Owner: "mallory", Counts: []engine.Count{engine.CountOf(1)}},
		{WorkerID: "w2", Owner: "mallory", Counts: []engine.Count{engine.CountOf(1)}},
	}
	if v := judge(same, 2, 5, nil); v.settled || v.want != 1 {
		t.Fatalf("one identity verified itself: %+v", v)
	}
	// Two of mallory's against one honest run: still a 1-to-1 dispute.
	dispute := append(same, Run{WorkerID: "w3", Owner: "honest", Counts: []engine.Count{engine.CountOf(197281)}})
	if v := judge(dispute, 2, 5, nil); v.settled || !v.disputed {
		t.Fatalf("one identity outvoted another: %+v", v)
	}
	// A second honest identity settles it.
	settled := append(dispute, Run{WorkerID: "w4", Owner: "other", Counts: []engine.Count{engine.CountOf(197281)}})
	if v := judge(settled, 2, 5, nil); !v.settled || v.counts[0] != engine.CountOf(197281) || v.agreeing != 2 {
		t.Fatalf("two identities did not settle: %+v", v)
	}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name     string
		runs     []Run
		required int
		settled  bool
		value    uint64
		want     int
		disputed bool
		failed   bool
	}{
		{"none", nil, 1, false, 0, 1, false, false},
		{"none verified", nil, 2, false, 0, 2, false, false},
		{"one", runs(7), 1, true, 7, 0, false, false},
		{"one of two", runs(7), 2, false, 0, 1, false, false},
		{"two agree", runs(7, 7), 2, true, 7, 0, false, false},
		{"mismatch", runs(7, 8), 2, false, 0, 1, true, false},
		{"late duplicate differs", runs(7, 8), 1, false, 0, 1, true, false},
		{"third settles", runs(7, 8, 7), 2, true, 7, 0, true, false},
		{"third settles other", runs(7, 8, 8), 2, true, 8, 0, true, false},
		{"three ways", runs(7, 8, 9), 2, false, 0, 1, true, false},
		{"verified then late wrong", runs(7, 7, 9), 2, true, 7, 0, true, false},
		{"exhausted", runs(1, 2, 3, 4, 5), 2, false, 0, 0, true, true},
	}
	for _, c := range cases {
		v := judge(c.runs, c.required, 5, nil)
		if v.settled != c.settled || v.want != c.want || v.disputed != c.disputed || v.failed != c.failed {
			t.Errorf("%s: got %+v", c.name, v)
			continue
		}
		if c.settled && v.counts[0] != engine.CountOf(c.value) {
			t.Errorf("%s: settled on %d, want %d", c.name, v.counts[0], c.value)
		}
	}
}

// TestJudgeDistrusted: an identity outvoted in a settled dispute of the
// job is no witness: a unit only it ran wants a run of someone else, and
// its run beside two honest ones still shows the dispute.
func TestJudgeDistrusted(t *testing.T) {
	lie := Run{WorkerID: "w1", Owner: "mallory", Counts: []engine.Count{engine.CountOf(2)}}
	truth := func(who string) Run {
		return Run{WorkerID: who, Owner: who, Counts: []engine.Count{engine.CountOf(1)}}
	}
	if v := judge([]Run{lie}, 1, 5, nil); !v.settled {
		t.Fatalf("an unverified run settles while its identity is trusted: %+v", v)
	}
	distrusted := map[string]bool{"mallory": true}
	if v := judge([]Run{lie}, 1, 5, distrusted); v.settled || v.want != 1 {
		t.Fatalf("a distrusted identity's lone run: %+v, want one more run", v)
	}
	if v := judge([]Run{lie, truth("h")}, 1, 5, distrusted); !v.settled || v.counts[0] != engine.CountOf(1) || !v.disputed {
		t.Fatalf("an honest run beside a distrusted one: %+v, want settled on it, disputed", v)
	}
	settled := []Run{lie, truth("h1"), truth("h2")}
	v := judge(settled, 2, 5, nil)
	if got := outvoted(settled, v); len(got) != 1 || got[0] != "mallory" {
		t.Fatalf("outvoted = %v, want mallory", got)
	}
	if got := outvoted([]Run{lie, truth("h")}, judge([]Run{lie, truth("h")}, 2, 5, nil)); got != nil {
		t.Fatalf("outvoted in an unsettled dispute = %v, want none", got)
	}
}
