package verify_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/capability"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// TestVerifyUnitsOnAWorker: a real worker (a farm on loopback) whose
// operator named Debian's Stockfish with --verify-engine offers it
// ("verify-engine:stockfish", read from the kind's runner: the
// coordinator counts one capable worker), and answers a verify unit, which travels as the typed
// WorkUnit.verify and back as SubmitRequest.verify, through the runner
// kinds/verify registers: perft(3) of the start position is 8902 with 20
// moves. The control: a unit for an engine no worker has stays pending,
// with no capable worker.
func TestVerifyUnitsOnAWorker(t *testing.T) {
	local, err := verifyproto.ParseLocalEngine("name=stockfish,cmd=/usr/games/stockfish")
	if err != nil {
		t.Skipf("Debian's Stockfish: %v", err) // it checks the program is there
	}
	farm := farmtest.Start(t, 1, func(c *localcluster.Config) { c.VerifyEngines = []verifyproto.LocalEngine{local} })
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ask := func(key, engine string) *arbiterv1.RunVerifyUnitResponse {
		t.Helper()
		resp, err := c.Verify.RunVerifyUnit(ctx, &arbiterv1.RunVerifyUnitRequest{SessionId: "s-worker-side-01", Key: key,
			Wait: durationpb.New(2 * time.Second),
			Unit: &arbiterv1.VerifyUnit{Engine: &arbiterv1.VerifyEngine{Name: engine},
				Query: &arbiterv1.VerifyQuery{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Depth: 3}}})
		if err != nil {
			t.Fatalf("RunVerifyUnit %s: %v", key, err)
		}
		return resp
	}
	for len(farm.Coordinator().Core.Workers()) == 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond) // the worker registers
	}
	resp := ask("k-stockfish", "stockfish")
	if resp.GetCapableWorkers() != 1 {
		t.Fatalf("%d workers offer %s, want the farm's one: %v", resp.GetCapableWorkers(), capability.VerifyEngine("stockfish"), resp)
	}
	for resp.GetState() == arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_PENDING && ctx.Err() == nil {
		resp = ask("k-stockfish", "stockfish")
	}
	if r := resp.GetResult(); resp.GetState() != arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_DONE || r.GetTotal() != "8902" ||
		len(r.GetLines()) != 20 || r.GetEngineError() != nil {
		t.Fatalf("stockfish's unit: %v", resp)
	}
	t.Logf("stockfish: perft(3) %s, %d moves, by worker %s", resp.GetResult().GetTotal(), len(resp.GetResult().GetLines()), resp.GetWorkerId())

	if none := ask("k-crafty", "crafty"); none.GetState() != arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_PENDING || none.GetCapableWorkers() != 0 {
		t.Errorf("a unit for an engine no worker has: %v; want pending with no capable worker", none)
	}
}
