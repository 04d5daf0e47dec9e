package loadtest

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/perftjob"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/identity"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestLoad runs 1,000 simulated workers against a real coordinator on
// loopback (real gRPC, real SQLite). It only runs with ARBITER_LOADTEST=1
// (scripts/bench-cluster.sh sets it) and is bounded to a few seconds.
func TestLoad(t *testing.T) {
	if os.Getenv("ARBITER_LOADTEST") != "1" {
		t.Skip("set ARBITER_LOADTEST=1 to run the coordinator load test")
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := coordinator.New(ctx, coordinator.Config{Store: st, Token: "load", MaxPositionsPerUnit: 1, MinUnits: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, _, err := c.NewGRPCServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	// perft 9 split at ply 4: 72,078 one-position units of depth 5.
	if _, err := c.Core.Create(ctx, identity.Bootstrap, perftjob.Kind, &arbiterv1.PerftSpec{Depth: 9, SplitPly: 4}); err != nil {
		t.Fatal(err)
	}
	var conns []grpc.ClientConnInterface
	for i := 0; i < 20; i++ {
		conn, err := clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: "load"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
	}
	for _, submit := range []bool{false, true} {
		res, err := Run(ctx, Config{Workers: 1000, Conns: conns, Duration: 5 * time.Second, MaxOps: 100_000, Submit: submit})
		if err != nil {
			t.Fatal(err)
		}
		mode := "lease+release"
		if submit {
			mode = "lease+submit"
		}
		t.Logf("load: 1000 workers, %s: %v", mode, res)
	}
}
