package perft

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestPrintPerft: a finished job as submit perft --wait, status --wait
// and up print it (divide by move, the verification in words, the
// statistics), as JSON, and in status's detail; a cancelled or failed job
// is exit status 1.
func TestPrintPerft(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	j := &arbiterv1.Job{JobId: "p1", Kind: "perft", State: arbiterv1.JobState_JOB_STATE_DONE, Nodes: "8902",
		Perft:     &arbiterv1.PerftSpec{Fen: "F", Depth: 3},
		CreatedAt: timestamppb.New(created), FinishedAt: timestamppb.New(created.Add(2 * time.Second)),
		// In generation order, as the coordinator sends it: printed by move.
		Divide:   []*arbiterv1.DivideEntry{{Move: "b1a3", Nodes: "400"}, {Move: "a2a3", Nodes: "380"}},
		Progress: &arbiterv1.JobProgress{UnitsTotal: 4, UnitsVerified: 2, Mismatches: 1, MismatchesSettled: 1}}
	var out bytes.Buffer
	if err := printFinished(&out, j, true, false); err != nil {
		t.Fatal(err)
	}
	want := "a2a3: 380\nb1a3: 400\n\nNodes: 8902\nTime:  2.000 s (0.0 Mnps)\nUnits: 4 (2 verified on a second worker, 1 mismatches, 1 settled)\n" +
		"Verification: sampled, 2 of 4 units computed by a second identity and agreeing\n"
	if out.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", out.String(), want)
	}
	// No unit computed twice: the total says it is unverified, in text,
	// JSON and status's detail.
	unchecked := &arbiterv1.Job{JobId: "p0", Kind: "perft", State: arbiterv1.JobState_JOB_STATE_DONE, Nodes: "8902", Perft: &arbiterv1.PerftSpec{Fen: "F", Depth: 3},
		Progress: &arbiterv1.JobProgress{UnitsTotal: 4, UnitsDone: 4}}
	out.Reset()
	if err := printFinished(&out, unchecked, false, false); err != nil || !strings.Contains(out.String(), "Verification: none, the counts are UNVERIFIED") {
		t.Errorf("unverified text %v:\n%s", err, out.String())
	}
	out.Reset()
	jobreport.PrintJob(&out, unchecked)
	if !strings.Contains(out.String(), "Verify:     none, the counts are UNVERIFIED") {
		t.Errorf("unverified detail:\n%s", out.String())
	}
	out.Reset()
	if err := printFinished(&out, unchecked, false, true); err != nil || !strings.Contains(out.String(), `"verification":"none"`) {
		t.Errorf("unverified JSON %v: %s", err, out.String())
	}
	if o := jobreport.NewJobJSON(unchecked); o.Perft == nil || o.Perft.Verification != jobreport.VerificationNone {
		t.Errorf("status --json of an unverified job: %+v", o.Perft)
	}
	out.Reset()
	if err := printFinished(&out, j, false, true); err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || js["nodes"] != 8902.0 || js["units_verified"] != 2.0 || js["divide"] != nil {
		t.Errorf("JSON %v: %s", err, out.String())
	}
	// A statistics job: the eight totals in text, JSON and status's detail.
	j.Perft.Stats, j.Perft.Slices = true, 2
	j.PerftStats = &arbiterv1.PerftStatistics{Captures: "34", EnPassant: "0", Castles: "0", Promotions: "0",
		Checks: "12", DiscoveryChecks: "0", DoubleChecks: "0", Checkmates: "0"}
	out.Reset()
	if err := printFinished(&out, j, false, false); err != nil || !strings.Contains(out.String(), "Captures:         34\n") ||
		!strings.Contains(out.String(), "Checks:           12\n") {
		t.Errorf("statistics text %v:\n%s", err, out.String())
	}
	out.Reset()
	if err := printFinished(&out, j, false, true); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Stats map[string]json.Number `json:"stats"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Stats["captures"] != "34" || st.Stats["checks"] != "12" || st.Stats["nodes"] != "8902" {
		t.Errorf("statistics JSON %v: %s", err, out.String())
	}
	if pj := jobreport.NewJobJSON(j).Perft; pj == nil || pj.Slices != 2 || pj.Stats == nil || pj.Stats.Captures != "34" {
		t.Errorf("status --json of a statistics job: %+v", pj)
	}
	out.Reset()
	jobreport.PrintJob(&out, j)
	if s := out.String(); !strings.Contains(s, "(split at ply 0, 2 slices, statistics, verify 0.00)") || !strings.Contains(s, "Statistics: 34 captures,") {
		t.Errorf("detail:\n%s", s)
	}
	j.State = arbiterv1.JobState_JOB_STATE_CANCELLED
	if err := printFinished(&out, j, false, false); cliexit.Code(err, -1) != 1 || err.Error() != "job p1 was cancelled" {
		t.Errorf("cancelled: %v", err)
	}
	j.State, j.Error = arbiterv1.JobState_JOB_STATE_FAILED, "boom"
	if err := printFinished(&out, j, false, false); cliexit.Code(err, -1) != 1 || err.Error() != "job p1 failed: boom" {
		t.Errorf("failed: %v", err)
	}
}
