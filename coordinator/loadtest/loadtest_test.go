package loadtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/leader"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/kinds/perft"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// backends runs fn on a SQLite store and on a PostgreSQL one (a real
// server; skipped with a message when PostgreSQL is not installed unless
// ARBITER_REQUIRE_POSTGRES=1), each given the store's URL ("": SQLite).
func backends(t *testing.T, fn func(t *testing.T, storeURL string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Start(t).NewDatabase(t)) })
}

// serve starts a real coordinator (a real store: SQLite in a temp dir,
// or the PostgreSQL database storeURL names; real gRPC on loopback) with
// a perft 9 job of 72,078 one-position units, and returns connections
// carrying worker credentials of several identities (each identity may
// register up to 1,024 workers).
func serve(t *testing.T, storeURL string, identities int) []grpc.ClientConnInterface {
	t.Helper()
	st, err := store.OpenURL(storeURL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if storeURL != "" {
		// As every coordinator on PostgreSQL runs: elected, its writes
		// fenced by the term (each group transaction checks it).
		el, err := leader.New(leader.Config{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(el.Close)
		if _, err := el.Campaign(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c, err := coordinator.New(ctx, coordinator.Config{Store: st, Token: "load",
		KindSettings: map[string]any{perft.Kind: perft.Config{MaxPositionsPerUnit: 1, MinUnits: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv, _, err := c.NewGRPCServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	if _, err := c.Core.Create(ctx, identity.Bootstrap, perft.Kind, &arbiterv1.PerftSpec{Depth: 9, SplitPly: 4}); err != nil {
		t.Fatal(err)
	}
	var conns []grpc.ClientConnInterface
	for i := 0; i < identities; i++ {
		tok, err := c.Credentials.Create(ctx, identity.Bootstrap, fmt.Sprintf("sim-%d", i), identity.Worker)
		if err != nil {
			t.Fatal(err)
		}
		// Two connections per identity spread the streams.
		for k := 0; k < 2; k++ {
			conn, err := clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: tok})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			conns = append(conns, conn)
		}
	}
	return conns
}

// TestLoadSmall runs in CI: 200 workers lease, heartbeat and submit
// durably for two seconds without an error. It asserts no timing.
func TestLoadSmall(t *testing.T) { backends(t, testLoadSmall) }

func testLoadSmall(t *testing.T, storeURL string) {
	conns := serve(t, storeURL, 2)
	ids, err := Register(context.Background(), 200, conns)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Conns: conns, Duration: 2 * time.Second, Submit: true, Heartbeat: true}, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load: %v", res)
	if res.Errors != 0 || res.Leases == 0 {
		t.Fatalf("errors or no leases: %v", res)
	}
}

// TestLoad is the full load test: 10,000 simulated workers on loopback
// (ARBITER_LOADTEST=1; scripts/bench-cluster.sh runs it). It prints lease
// latency at 200 leases/s (a 10,000-core farm with minute-long batches),
// open loop, each lease heartbeated and answered by a durable submit, and
// the saturated rate, on SQLite and then on PostgreSQL, side by side.
// ARBITER_LOADTEST_WORKERS and ARBITER_LOADTEST_RATE change the figures.
func TestLoad(t *testing.T) {
	if os.Getenv("ARBITER_LOADTEST") != "1" {
		t.Skip("set ARBITER_LOADTEST=1 to run the coordinator load test")
	}
	backends(t, testLoad)
}

func testLoad(t *testing.T, storeURL string) {
	workers, rate := 10_000, 200.0
	if v, err := strconv.Atoi(os.Getenv("ARBITER_LOADTEST_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("ARBITER_LOADTEST_RATE"), 64); err == nil && v > 0 {
		rate = v
	}
	conns := serve(t, storeURL, (workers+1023)/1024)
	t0 := time.Now()
	ids, err := Register(context.Background(), workers, conns)
	if err != nil {
		t.Fatal(err)
	}
	reg := time.Since(t0)
	res, err := Run(context.Background(), Config{Conns: conns, Duration: 20 * time.Second, Rate: rate, Submit: true, Heartbeat: true}, ids)
	if err != nil {
		t.Fatal(err)
	}
	res.RegisterTime = reg
	t.Logf("load: open loop at %.0f leases/s: %v", rate, res)
	res, err = Run(context.Background(), Config{Conns: conns, Duration: 10 * time.Second, Submit: true, Heartbeat: true}, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load: saturated: %v", res)
}
