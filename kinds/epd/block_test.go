package epd

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

// runningJob is a running job's full snapshot over WAC's first four
// positions and two engines in batches of two, with only engine a's
// first batch merged: a solving move on the first position, a wrong one
// on the second.
func runningJob(t *testing.T) *arbiterv1.Job {
	t.Helper()
	s := suite(t, "wac.epd", 4)
	spec := SpecOf(s, twoEngines, Limit{Nodes: 1000}, 2)
	solving := Result{Engine: 0, Position: 0, Move: s.Positions[0].Best[0], Solved: true, SolveTime: 12 * time.Millisecond, SolveDepth: 3, Depth: 5, Nodes: 900}
	wrong := Result{Engine: 0, Position: 1, Move: "c4c3", Depth: 6, Nodes: 1000}
	batch := &arbiterv1.EpdResult{Batch: 0, Engine: 0, Positions: []*arbiterv1.EpdPositionResult{ResultProto(solving), ResultProto(wrong)}}
	if b := Batches(spec)[0]; b.Engine != 0 || len(b.Positions) != 2 || b.Positions[0] != 0 || b.Positions[1] != 1 {
		t.Fatalf("batch 0 is %v, not engine a's first two positions", b)
	}
	detail, err := anypb.New(&arbiterv1.EpdJob{Spec: spec, Results: []*arbiterv1.EpdResult{batch}, Batches: 4, BatchesDone: 1, BatchesLeased: 1,
		Searched: []uint32{2, 0}, Solved: []uint32{1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	return &arbiterv1.Job{JobId: "e0123", Kind: Kind, State: arbiterv1.JobState_JOB_STATE_RUNNING, Detail: detail}
}

// TestRunningJobBlockAndPage: a running job's block (through
// resultblock.Of, the registry every door reads) says it is running with
// its batches and gives engine a's figures and engine b none; its page
// rows show the merged results and the rest pending; its detail carries
// the merged results only. The control: the same job as a list's
// snapshot (no positions) still has a block, from the counts.
func TestRunningJobBlockAndPage(t *testing.T) {
	j := runningJob(t)
	want := "EPD | wac.epd | nodes=1000 | 4 positions\n" +
		"State | running, 1 of 4 batches\n" +
		"Engine | Solved |    % |   Time | Depth\n" +
		"a      |    1/2 | 50.0 | 0.012s |   3.0\n" +
		"b      |    0/0 |    - |      - |     -\n" +
		"Time, Depth: mean time and depth to solve over the solved positions\n"
	for _, style := range []resultblock.Style{resultblock.OpenBench, resultblock.Fishtest} {
		if got := resultblock.Of(j, style, ""); got != want {
			t.Errorf("%s block:\n%s\nwant\n%s", style, got, want)
		}
	}
	run, err := farmRunOf(j)
	if err != nil {
		t.Fatal(err)
	}
	rows := positionRows(run)
	if len(rows) != 4 || !rows[0].Results[0].Solved || rows[0].Results[0].Solve != "0.012s depth 3" || !rows[1].Results[0].Done ||
		rows[1].Results[0].Solved || rows[1].Results[0].Move != "c4c3" || rows[0].Results[1].Done || rows[3].Results[0].Done {
		t.Errorf("page rows: %+v", rows)
	}
	d := detailJSON(j).(*DetailJSON)
	if d.Positions != 4 || len(d.Results) != 2 || d.Engines[0].Totals.Solved != 1 || d.Engines[1].Totals.Searched != 0 {
		t.Errorf("detail: %+v", d)
	}

	list := runningJob(t)
	listDetail := detailOf(list)
	listDetail.Spec.Positions, listDetail.Results = nil, nil
	list.Detail, _ = anypb.New(listDetail)
	block := resultblock.Of(list, resultblock.OpenBench, "")
	if !strings.Contains(block, "a      |    1/2 | 50.0 |    - |     -") || strings.Contains(block, "| 4 positions") {
		t.Errorf("a list snapshot's block:\n%s", block)
	}
}
