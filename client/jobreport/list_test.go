package jobreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// listJobs are one job of each kind as the coordinator describes them: a
// running SPRT test, a blocked perft job, a finished perft job and a tune.
func listJobs() []*arbiterv1.Job {
	running := arbiterv1.JobState_JOB_STATE_RUNNING
	tc := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 2000}}
	return []*arbiterv1.Job{
		{JobId: "s1", Kind: "sprt", State: running,
			Match: &arbiterv1.MatchSpec{EngineA: &arbiterv1.EngineSpec{Name: "new"}, EngineB: &arbiterv1.EngineSpec{Name: "base"},
				TimeControl: tc, Sprt: &arbiterv1.SprtParams{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: "normalized"}},
			MatchProgress: &arbiterv1.MatchProgress{Games: 40, Wins: 12, Draws: 20, Losses: 8, Elo: 34.9, EloCiLow: -20.1, EloCiHigh: 90.1,
				Llr: 0.42, LowerBound: -2.94, UpperBound: 2.94, SprtState: "continue",
				Pentanomial: &arbiterv1.Pentanomial{Ll: 1, Ld: 3, Dd: 8, Wd: 5, Ww: 3}},
			Progress: &arbiterv1.JobProgress{UnitsTotal: 10, UnitsDone: 5}},
		{JobId: "p1", Kind: "perft", State: running, Perft: &arbiterv1.PerftSpec{Fen: "8/8/8/8/8/8/8/K1k5 w - - 0 1", Depth: 6, VerifyFraction: 0.1},
			Progress: &arbiterv1.JobProgress{UnitsTotal: 60, UnitsDone: 54, NodesDone: "123456",
				Blocked: "waiting for a worker of a second identity"}},
		{JobId: "p2", Kind: "perft", State: arbiterv1.JobState_JOB_STATE_DONE, Nodes: "8902", Perft: &arbiterv1.PerftSpec{Fen: "startpos", Depth: 3},
			Divide:   []*arbiterv1.DivideEntry{{Move: "a2a3", Nodes: "380"}},
			Progress: &arbiterv1.JobProgress{UnitsTotal: 4, UnitsDone: 4, NodesDone: "8902"}},
		{JobId: "t1", Kind: "spsa", State: running, Spsa: &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "dev"}, Pairs: 1000, TimeControl: tc},
			SpsaProgress: &arbiterv1.SpsaProgress{Updates: 7, PairsDone: 56, Games: 112,
				Params: []*arbiterv1.SpsaParamState{{Name: "RFPMargin", Start: 80, Current: 83.5, Min: 0, Max: 200}}}},
	}
}

func TestPrintJobsColumnsPerKind(t *testing.T) {
	var out bytes.Buffer
	if err := PrintJobs(&out, listJobs()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"TEST  STATE    ENGINES      TC          GAMES  ELO          LLR\n",
		"s1    running  new vs base  nodes=2000  40     34.9 ± 55.1  0.42 (-2.94, 2.94)\n",
		"PERFT  STATE              DEPTH  NODES                 PROGRESS           FEN\n",
		"p1     running (blocked)  6      123456+ (unverified)  90% (54/60 units)  8/8/8/8/8/8/8/K1k5 w - - 0 1\n",
		"p2     done               3      8902 (unverified)     100% (4/4 units)   startpos\n",
		"TUNE  STATE    ENGINE  TC          UPDATES  PAIRS    GAMES  PARAMS\n",
		"t1    running  dev     nodes=2000  7        56/1000  112    RFPMargin\n",
		"\np1 cannot progress: waiting for a worker of a second identity\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("list lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	PrintJobs(&out, nil)
	if out.String() != "No jobs.\n" {
		t.Errorf("empty list: %q", out.String())
	}
}

// The JSON keeps counts as integers, states in lower case and a missing
// total as null.
func TestJobJSON(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJobs(&out, listJobs()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Jobs) != 4 {
		t.Fatalf("%v: %s", err, out.String())
	}
	test, blocked, done := got.Jobs[0], got.Jobs[1], got.Jobs[2]
	if test["state"] != "running" || test["test"].(map[string]any)["sprt"].(map[string]any)["state"] != "continue" ||
		test["test"].(map[string]any)["games"] != 40.0 {
		t.Errorf("test: %v", test)
	}
	bp := blocked["perft"].(map[string]any)
	if blocked["blocked"] != "waiting for a worker of a second identity" || bp["nodes"] != nil || bp["nodes_done"] != 123456.0 {
		t.Errorf("blocked perft: %v", blocked)
	}
	if dp := done["perft"].(map[string]any); dp["nodes"] != 8902.0 || dp["divide"].(map[string]any)["a2a3"] != 380.0 {
		t.Errorf("done perft: %v", done)
	}
	if !strings.Contains(out.String(), `"nodes":8902,`) {
		t.Errorf("nodes not a JSON integer: %s", out.String())
	}
}

// Whether a test is an SPRT is its kind (Job.kind), not whether its spec
// carries SPRT parameters: a match shows no LLR and no SPRT in its JSON
// even if a client sent bounds with it.
func TestSPRTIsItsKind(t *testing.T) {
	j := listJobs()[0]
	j.Kind = "match"
	var out bytes.Buffer
	if err := PrintJobs(&out, []*arbiterv1.Job{j}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "0.42") {
		t.Errorf("a match listed with an LLR:\n%s", out.String())
	}
	if o := NewJobJSON(j); o.Test == nil || o.Test.SPRT != nil {
		t.Errorf("a match's JSON: %+v", o.Test)
	}
	out.Reset()
	PrintTest(&out, j)
	if strings.Contains(out.String(), "LLR") {
		t.Errorf("a match printed with an SPRT:\n%s", out.String())
	}
}
