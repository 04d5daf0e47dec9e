package store

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// A tune's updates come back in the order applied with θ bit for bit; an
// update of a batch already applied, or at a seq already taken, is refused
// and changes nothing.
func TestTuneUpdates(t *testing.T) { eachBackend(t, testTuneUpdates) }

func testTuneUpdates(t *testing.T, open opener) {
	ctx := context.Background()
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{ID: "t1", Kind: "spsa", State: StateRunning, CreatedAt: time.Unix(100, 0), RootMoves: []string{}, UnitsTotal: 3}
	if err := s.CreateTune(ctx, j, &Tune{JobID: "t1", Spec: []byte{1, 2, 3}, BatchPairs: 4}); err != nil {
		t.Fatal(err)
	}
	thetas := [][]float64{{0.1, 1.0 / 3, math.Nextafter(75, 76)}, {-1e-300, 2.5, 1e15}}
	for i, batch := range []int{2, 0} {
		u := &TuneUpdate{JobID: "t1", Seq: i, Batch: batch, UnitID: "t1." + string(rune('0'+batch)), WorkerID: "w", Pairs: 4,
			Penta: [5]int64{0, 1, 2, 1, 0}, Wins: 2, Draws: 4, Losses: 2, Incidents: "time_loss:1", Theta: thetas[i],
			LeasedAt: time.Unix(110, 0), At: time.Unix(120+int64(i), 0), ElapsedMS: 9}
		var job *JobChange
		if i == 1 {
			job = &JobChange{State: StateDone, FinishedAt: time.Unix(200, 0)}
		}
		if err := s.CommitTuneUpdate(ctx, u, []string{"[a]", "[b]", "[c]", "[d]", "[e]", "[f]", "[g]", "[h]"}, job,
			[]Event{{JobID: "t1", WorkerID: "w", Kind: "excluded", At: time.Unix(120, 0)}}); err != nil {
			t.Fatal(err)
		}
	}
	again := &TuneUpdate{JobID: "t1", Seq: 2, Batch: 2, UnitID: "t1.2", Theta: []float64{1}}
	if err := s.CommitTuneUpdate(ctx, again, []string{"[x]"}, nil, nil); err == nil {
		t.Fatal("batch 2 applied twice")
	}
	taken := &TuneUpdate{JobID: "t1", Seq: 1, Batch: 1, UnitID: "t1.1", Theta: []float64{1}}
	if err := s.CommitTuneUpdate(ctx, taken, nil, nil, nil); err == nil {
		t.Fatal("seq 1 taken twice")
	}
	s.Close()

	s, err = open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	row, err := s.Tune(ctx, "t1")
	if err != nil || row.BatchPairs != 4 || !slices.Equal(row.Spec, []byte{1, 2, 3}) {
		t.Fatalf("tune row %+v %v", row, err)
	}
	us, err := s.TuneUpdates(ctx, "t1")
	if err != nil || len(us) != 2 {
		t.Fatalf("updates %+v %v", us, err)
	}
	for i, u := range us {
		if u.Seq != i || !slices.Equal(u.Theta, thetas[i]) || u.Penta != [5]int64{0, 1, 2, 1, 0} || u.Incidents != "time_loss:1" || !u.At.Equal(time.Unix(120+int64(i), 0)) {
			t.Errorf("update %d: %+v", i, u)
		}
	}
	if us[0].Batch != 2 || us[1].Batch != 0 {
		t.Errorf("batches in applied order: %d, %d", us[0].Batch, us[1].Batch)
	}
	if n, _ := s.CountPGNs(ctx, "t1"); n != 16 {
		t.Errorf("%d games stored, want 16", n)
	}
	jobs, _ := s.Jobs(ctx)
	if len(jobs) != 1 || jobs[0].State != StateDone {
		t.Errorf("job %+v", jobs)
	}
	if ev, _ := s.Events(ctx, "t1"); len(ev) != 2 {
		t.Errorf("%d events, want 2", len(ev))
	}
	if _, err := s.Tune(ctx, "nope"); err == nil {
		t.Error("an unknown tune read")
	}
	// Retention deletes a finished tune's games and keeps its updates.
	ids, err := s.ExpirePGNs(ctx, time.Unix(300, 0), time.Unix(400, 0))
	if err != nil || !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("expired %v %v", ids, err)
	}
	if n, _ := s.CountPGNs(ctx, "t1"); n != 0 {
		t.Errorf("%d games left after expiry", n)
	}
	if row, _ := s.Tune(ctx, "t1"); !row.PGNsExpired.Equal(time.Unix(400, 0)) {
		t.Errorf("expiry recorded as %v", row.PGNsExpired)
	}
	if us, _ := s.TuneUpdates(ctx, "t1"); len(us) != 2 {
		t.Errorf("%d updates after expiry", len(us))
	}
}
