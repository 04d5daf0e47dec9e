//go:build unix

package gamepair_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker/gamepairs"
)

// Games an engine loses by failing (crash, time forfeit by a hang or a slow
// move, a stall, no move, an illegal move) replay too: the worker's
// incidents say what the moves cannot. The failing engine is
// testing/testengines/badengine, run by the worker as a UCI process.
func TestReplayHonestEngineFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a UCI engine")
	}
	bad := filepath.Join(t.TempDir(), "badengine")
	if out, err := exec.Command("go", "build", "-o", bad, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput(); err != nil {
		t.Fatalf("building badengine: %v\n%s", err, out)
	}
	nodes := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 200}}
	clock := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{Base: durationpb.New(400 * time.Millisecond)}}}
	moveTime := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(20 * time.Millisecond)}}
	for _, c := range []struct {
		mode string
		tc   *arbiterv1.TimeControl
		want arbiterv1.GameTermination
	}{
		{"crash", nodes, arbiterv1.GameTermination_GAME_TERMINATION_CRASH},
		{"hang", clock, arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT},
		{"stall", nodes, arbiterv1.GameTermination_GAME_TERMINATION_STALL},
		{"nobestmove", nodes, arbiterv1.GameTermination_GAME_TERMINATION_ILLEGAL_MOVE},
		{"illegal", nodes, arbiterv1.GameTermination_GAME_TERMINATION_ILLEGAL_MOVE},
		{"slow", moveTime, arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT},
	} {
		t.Run(c.mode, func(t *testing.T) {
			b := &arbiterv1.GamePairBatch{
				TestId:  "t1",
				EngineA: &arbiterv1.EngineSpec{Name: "embedded", Command: "embedded", Options: map[string]string{"Hash": "1"}},
				EngineB: &arbiterv1.EngineSpec{Name: "bad", Command: bad, Protocol: "uci",
					Options: map[string]string{"Mode": c.mode, "FailAt": "3", "SlowMs": "200"}},
				TimeControl: c.tc,
				Openings: []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4"}},
					{Index: 1, Fen: "r3k2r/pppq1ppp/2npbn2/4p3/4P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1"}},
				HangTimeout: durationpb.New(300 * time.Millisecond),
			}
			res, err := gamepairs.PlayBatch(context.Background(), b, builtin.New)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gamepair.CheckResult("t1.0", 2, res); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, g := range res.GetGames() {
				if g.GetTermination() == c.want {
					n++
				}
			}
			if n == 0 {
				t.Fatalf("no game ended %s: %v", c.want, res.GetGames())
			}
			if err := gamepair.ReplayBatch("t1.0", b, res); err != nil {
				t.Fatalf("an honest batch is refused: %v\n%s", err, res.GetPgns())
			}
			// Without the incidents that say so, the failures do not count.
			res.Incidents = nil
			if err := gamepair.ReplayBatch("t1.0", b, res); err == nil {
				t.Fatal("engine failures without their incidents accepted")
			}
		})
	}
}
