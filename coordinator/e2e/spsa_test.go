//go:build unix

package e2e

// An SPSA tune through the cluster (issue 15): real coordinator and worker
// processes on loopback, the CLI as the client, three real parameters of
// the embedded engine at fixed nodes. A worker is SIGKILLed mid-batch and
// the coordinator SIGKILLed and restarted; the store must then hold one
// update per distinct accepted batch, none twice, in an order whose replay
// gives every stored θ, and the tune must carry on from the θ and
// trajectory where it stood.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// storedUpdate is a row of tune_updates.
type storedUpdate struct {
	seq, batch          int
	wins, draws, losses int
	theta               []float64
}

// tuneUpdates reads a tune's updates in the order they were applied,
// straight from the store file (the coordinator may be dead).
func tuneUpdates(t *testing.T, data, id string) []storedUpdate {
	t.Helper()
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT seq, batch_idx, wins, draws, losses, theta FROM tune_updates WHERE job_id=? ORDER BY seq", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedUpdate
	for rows.Next() {
		var u storedUpdate
		var theta string
		if err := rows.Scan(&u.seq, &u.batch, &u.wins, &u.draws, &u.losses, &theta); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(theta), &u.theta); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkUpdates: one update per distinct batch, seq 0, 1, 2, ... with no
// gap, and a replay of the batches' results in seq order gives every
// stored θ exactly. It returns the replayed tune.
func checkUpdates(t *testing.T, cfg spsa.Config, us []storedUpdate) *spsa.Tune {
	t.Helper()
	tune, err := spsa.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for i, u := range us {
		if u.seq != i {
			t.Fatalf("update %d stored as seq %d", i, u.seq)
		}
		if seen[u.batch] {
			t.Fatalf("batch %d applied twice (seq %d)", u.batch, u.seq)
		}
		seen[u.batch] = true
		if _, n := cfg.BatchRange(u.batch); u.wins+u.draws+u.losses != 2*n {
			t.Fatalf("batch %d: %d+%d+%d games, want %d", u.batch, u.wins, u.draws, u.losses, 2*n)
		}
		if err := tune.Apply(u.batch, u.wins, u.losses); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tune.Theta(), u.theta) {
			t.Fatalf("update %d (batch %d): replay gives %v, the store holds %v", i, u.batch, tune.Theta(), u.theta)
		}
	}
	return tune
}

func currentTheta(j *arbiterv1.Job) []float64 {
	var out []float64
	for _, p := range j.GetSpsaProgress().GetParams() {
		out = append(out, p.GetCurrent())
	}
	return out
}

// trajectoryPrefix checks that every trajectory point of before up to its
// last full point is in after with the same θ.
func trajectoryPrefix(t *testing.T, before, after *arbiterv1.SpsaProgress) {
	t.Helper()
	bu, au := before.GetTrajectoryUpdates(), after.GetTrajectoryUpdates()
	if len(bu) < 2 || len(au) < len(bu) {
		t.Fatalf("trajectory points before %v, after %v", bu, au)
	}
	for k := range bu {
		if bu[k] != au[k] {
			t.Fatalf("trajectory point %d: update %d before, %d after", k, bu[k], au[k])
		}
		for i, p := range before.GetParams() {
			if a := after.GetParams()[i].GetTrajectory()[k]; p.GetTrajectory()[k] != a {
				t.Fatalf("%s at update %d: %v before, %v after", p.GetName(), bu[k], p.GetTrajectory()[k], a)
			}
		}
	}
}

func TestClusterTuneSurvivesKills(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data)
	victim := startWorker(t, addr, "--name", "victim")
	w2 := startWorker(t, addr, "--name", "w2")
	const pairs, batchPairs = 28, 2
	const batches = pairs / batchPairs
	params := "from-engine:RFPMargin,FutMargin,KnightValueMG"
	args := append([]string{"submit", "spsa"}, clientArgs(addr)...)
	args = append(args, "--engine", "name=dev,builtin,option.UseNNUE=false", "--params", params, "--pairs", "28", "--batch-pairs", "2",
		"--each", "nodes=2000", "--openings", "file="+book+",order=random,seed=5")
	out, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("submit spsa: exit %d: %s", code, out)
	}
	id := strings.TrimSpace(out)
	conn := dial(t, addr, token)
	updates := func(n uint64) func(*arbiterv1.Job) bool {
		return func(j *arbiterv1.Job) bool { return j.GetSpsaProgress().GetUpdates() >= n }
	}
	// Both workers hold a batch, so that the kill lands mid-batch.
	j := waitFor(t, conn, id, 90*time.Second, "3 updates, both workers busy", func(j *arbiterv1.Job) bool {
		return updates(3)(j) && j.GetProgress().GetActiveWorkers() == 2
	})
	cfg := spsaspec.Config(j.GetSpsa())
	cfg.BatchPairs = int(j.GetSpsaProgress().GetBatchPairs())
	if cfg.BatchPairs != batchPairs || cfg.Batches() != batches || len(cfg.Params) != 3 {
		t.Fatalf("tune of %d parameters in %d batches of %d, want 3 in %d of %d", len(cfg.Params), cfg.Batches(), cfg.BatchPairs, batches, batchPairs)
	}
	victim.killHolding(t, conn, "victim")
	victimDisconnects := func(j *arbiterv1.Job) int {
		for _, w := range j.GetSpsaProgress().GetWorkers() {
			if w.GetName() == "victim" {
				return int(w.GetDisconnects())
			}
		}
		return 0
	}
	// Its lease expires (a disconnect) before the coordinator is killed
	// below, which would take the lease with it.
	waitFor(t, conn, id, 30*time.Second, "the victim's lease expired", func(j *arbiterv1.Job) bool { return victimDisconnects(j) > 0 })
	waitFor(t, conn, id, 90*time.Second, "3 more updates", updates(6))
	// The other worker too (mid-batch), then the coordinator, so that
	// nothing lands between the last snapshot and the kill.
	w2.kill(t)
	time.Sleep(200 * time.Millisecond) // a result in flight lands or is lost
	before := getJob(t, conn, id)
	co.kill(t)
	atKill := tuneUpdates(t, data, id)
	checkUpdates(t, cfg, atKill)
	if uint64(len(atKill)) != before.GetSpsaProgress().GetUpdates() || !slices.Equal(atKill[len(atKill)-1].theta, currentTheta(before)) {
		t.Fatalf("before the kill: %d updates, θ %v; the store holds %d, θ %v", before.GetSpsaProgress().GetUpdates(), currentTheta(before),
			len(atKill), atKill[len(atKill)-1].theta)
	}

	coordinator(t, addr, data)
	conn = dial(t, addr, token)
	resumed := getJob(t, conn, id)
	if !slices.Equal(currentTheta(resumed), atKill[len(atKill)-1].theta) || resumed.GetSpsaProgress().GetUpdates() != uint64(len(atKill)) {
		t.Fatalf("resumed at %d updates, θ %v; stored %d, θ %v", resumed.GetSpsaProgress().GetUpdates(), currentTheta(resumed),
			len(atKill), atKill[len(atKill)-1].theta)
	}
	trajectoryPrefix(t, before.GetSpsaProgress(), resumed.GetSpsaProgress())
	t.Logf("coordinator killed at %d of %d updates; resumed at θ %v", len(atKill), batches, currentTheta(resumed))

	startWorker(t, addr, "--name", "w3")
	startWorker(t, addr, "--name", "w4")
	final := waitFor(t, conn, id, 3*time.Minute, "done", done)
	all := tuneUpdates(t, data, id)
	if len(all) != batches {
		t.Fatalf("%d updates stored, want one per batch (%d)", len(all), batches)
	}
	replayed := checkUpdates(t, cfg, all)
	if !slices.Equal(replayed.Theta(), currentTheta(final)) || final.GetSpsaProgress().GetUpdates() != batches {
		t.Fatalf("final θ %v after %d updates; the replay of the store gives %v", currentTheta(final), final.GetSpsaProgress().GetUpdates(), replayed.Theta())
	}
	// The updates before the kill are the first ones, unchanged: the tune
	// continued where it stood.
	for i, u := range atKill {
		if all[i].batch != u.batch || !slices.Equal(all[i].theta, u.theta) {
			t.Fatalf("update %d: batch %d θ %v at the kill, batch %d θ %v at the end", i, u.batch, u.theta, all[i].batch, all[i].theta)
		}
	}
	trajectoryPrefix(t, before.GetSpsaProgress(), final.GetSpsaProgress())
	if sp := final.GetSpsaProgress(); sp.GetGames() != 2*pairs || sp.GetPairsDone() != pairs || sp.GetWins()+sp.GetDraws()+sp.GetLosses() != 2*pairs {
		t.Fatalf("final counts: %d games, %d pairs, W/D/L %d/%d/%d", sp.GetGames(), sp.GetPairsDone(), sp.GetWins(), sp.GetDraws(), sp.GetLosses())
	}

	// The victim's batch was lost with it and played again by another
	// worker (its lease expired: a disconnect), and still applied once.
	if victimDisconnects(final) == 0 {
		t.Fatalf("no disconnect recorded for the SIGKILLed worker: %v", final.GetSpsaProgress().GetWorkers())
	}

	// The CLI's views of the finished tune.
	out, code = cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	for _, want := range []string{"State:      done", "14 of 14 updates applied (28 pairs)", "Games:      56", "RFPMargin", "KnightValueMG",
		"Trajectory (theta at the start", "victim"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("status: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	t.Logf("status:\n%s", out)
	out, code = cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	var js jobreport.JobJSON
	jerr := json.Unmarshal([]byte(out), &js)
	var theta []float64
	if js.Tune != nil {
		for _, p := range js.Tune.Params {
			theta = append(theta, p.Current)
		}
	}
	if code != 0 || jerr != nil || js.Kind != "spsa" || js.State != "done" || !slices.Equal(theta, currentTheta(final)) {
		t.Fatalf("status --json: exit %d, %v, θ %v:\n%s", code, jerr, theta, out)
	}
	out, code = cli(t, append([]string{"spsa", "export", id, "--format", "options"}, clientArgs(addr)...)...)
	want := spsa.OptionMap(cfg.Params, spsa.Rounded(cfg.Params, currentTheta(final)))
	for name, v := range want {
		if code != 0 || !strings.Contains(out, "option."+name+"="+v) {
			t.Fatalf("spsa export: exit %d, lacks option.%s=%s:\n%s", code, name, v, out)
		}
	}
	pgn := filepath.Join(t.TempDir(), "tune.pgn")
	if out, code := cli(t, append([]string{"pgn", id, "-o", pgn}, clientArgs(addr)...)...); code != 0 || countPGN(t, pgn) != 2*pairs {
		t.Fatalf("pgn: exit %d, %d games: %s", code, countPGN(t, pgn), out)
	}
}

// Bad tunes are refused with the field named and nothing is stored: by
// the CLI before it submits, and by the coordinator for a client that
// skips the CLI's checks.
func TestClusterTuneBadInput(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	base := append([]string{"submit", "spsa"}, clientArgs(addr)...)
	base = append(base, "--engine", "name=dev,builtin", "--each", "nodes=1000", "--openings", "file="+book, "--pairs", "10")
	notSpin := filepath.Join(t.TempDir(), "engine.sh")
	os.WriteFile(notSpin, []byte("#!/bin/sh\nwhile read l; do case \"$l\" in uci) echo 'option name Ponder type check default false'; echo uciok;; quit) exit;; esac; done\n"), 0o755)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--params", "NoSuch,1,0,5,1,0.002"}, `param "NoSuch": the engine has no option`},
		{[]string{"--params", "RFPMargin,75,300,20,5,0.002"}, `param "RFPMargin": min 300 > max 20`},
		{[]string{"--params", "RFPMargin,500,20,300,5,0.002"}, `param "RFPMargin": start 500 is outside`},
		{[]string{"--params", "RFPMargin,75,20,300,0,0.002"}, `param "RFPMargin": c_end 0 must be positive`},
		{[]string{"--params", "RFPMargin;75;20;300"}, "--params"},
		{[]string{"--params", "from-engine:Ponder", "--engine", "name=s,cmd=" + notSpin}, `param "Ponder": the engine's option is a check, not a spin`},
		{[]string{"--params", "from-engine:RFPMargin", "--alpha", "5"}, "--alpha 5"},
	} {
		out, code := cli(t, append(append([]string(nil), base...), c.args...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, out)
		}
	}
	if out, code := cli(t, append([]string{"spsa", "export", "t000000000000", "--format", "xml"}, clientArgs(addr)...)...); code != 2 || !strings.Contains(out, "--format") {
		t.Errorf("export --format xml: exit %d:\n%s", code, out)
	}
	// The coordinator's own checks.
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, token))
	good := func() *arbiterv1.SpsaSpec {
		return &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
			Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002}},
			Pairs:  10, BatchPairs: 2,
			TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
			Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}}
	}
	for _, c := range []struct {
		edit func(*arbiterv1.SpsaSpec)
		want string
	}{
		{func(s *arbiterv1.SpsaSpec) { s.Params[0].Name = "NoSuch" }, "NoSuch"},
		{func(s *arbiterv1.SpsaSpec) { s.Params[0].Min, s.Params[0].Max = 300, 20 }, "min 300 > max 20"},
		{func(s *arbiterv1.SpsaSpec) { s.Params[0].Start = 500 }, "start 500"},
		{func(s *arbiterv1.SpsaSpec) { s.Params[0].CEnd = -1 }, "c_end -1"},
		{func(s *arbiterv1.SpsaSpec) { s.Params[0].Max = 9999 }, "RFPMargin"},
		{func(s *arbiterv1.SpsaSpec) {
			s.Engine.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 500}}
		}, `engine "dev": a tune plays both sides under the tune's time_control`},
	} {
		spec := good()
		c.edit(spec)
		_, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: spec})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bad spec (%s): %v", c.want, err)
		}
	}
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tunes, jobsN int
	db.QueryRow("SELECT COUNT(*) FROM tunes").Scan(&tunes)
	db.QueryRow("SELECT COUNT(*) FROM jobs").Scan(&jobsN)
	if tunes != 0 || jobsN != 0 {
		t.Fatalf("%d tunes, %d jobs stored after refusals", tunes, jobsN)
	}
	// The good spec is taken: the refusals above were for their fields.
	if _, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: good()}); err != nil {
		t.Fatalf("good spec: %v", err)
	}
}
