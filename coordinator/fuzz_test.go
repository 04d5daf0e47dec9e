package coordinator

import (
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// fuzzTarget is one coordinator shared by every fuzz input: a real store,
// a real gRPC server on loopback, an admin and a worker connection.
type fuzzTarget struct {
	admin, worker *grpc.ClientConn
	workerID      string
}

var (
	fuzzOnce sync.Once
	fuzzT    *fuzzTarget
	fuzzErr  error
)

func fuzzSetup(dir string) (*fuzzTarget, error) {
	fuzzOnce.Do(func() {
		st, err := store.Open(dir)
		if err != nil {
			fuzzErr = err
			return
		}
		c, err := New(context.Background(), Config{Store: st, Token: "admin"})
		if err != nil {
			fuzzErr = err
			return
		}
		srv, _, err := c.NewGRPCServer(nil)
		if err != nil {
			fuzzErr = err
			return
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fuzzErr = err
			return
		}
		go srv.Serve(lis)
		tok, err := c.Credentials.Create(context.Background(), identity.Bootstrap, "fuzz-worker", identity.Worker)
		if err != nil {
			fuzzErr = err
			return
		}
		t := &fuzzTarget{}
		if t.admin, err = clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: "admin"}); err != nil {
			fuzzErr = err
			return
		}
		if t.worker, err = clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: tok}); err != nil {
			fuzzErr = err
			return
		}
		r, err := arbiterv1.NewWorkerServiceClient(t.worker).Register(context.Background(), &arbiterv1.RegisterRequest{Name: "fuzz",
			Capabilities: &arbiterv1.WorkerCapabilities{Cores: 1, Capabilities: []string{"perft", "game-pair"}}})
		if err != nil {
			fuzzErr = err
			return
		}
		t.workerID = r.GetWorkerId()
		fuzzT = t
	})
	return fuzzT, fuzzErr
}

// FuzzRequests feeds decoded requests of every kind to a running
// coordinator through its real gRPC face: no input may crash it (a
// recovered panic answers Internal, which fails the fuzz) or make one call
// allocate without bound.
func FuzzRequests(f *testing.F) {
	seed := func(method byte, m proto.Message) {
		b, _ := proto.Marshal(m)
		f.Add(method, b)
	}
	seed(0, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3, VerifyFraction: 1}})
	seed(1, &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{EngineA: &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
		EngineB: &arbiterv1.EngineSpec{Name: "b", Command: "embedded"}, Games: 2,
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 100}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}}}})
	seed(2, &arbiterv1.LeaseRequest{})
	seed(3, &arbiterv1.HeartbeatRequest{Leases: []*arbiterv1.HeldLease{{LeaseId: "x", UnitId: "p1.17179869184"}}})
	seed(4, &arbiterv1.SubmitRequest{LeaseId: "x", UnitId: "p1.0", Result: &arbiterv1.SubmitRequest_Perft{Perft: &arbiterv1.PerftBatchResult{Counts: []uint64{1}}}})
	seed(5, &arbiterv1.SubmitRequest{UnitId: "s1.0", Result: &arbiterv1.SubmitRequest_GamePairs{GamePairs: &arbiterv1.GamePairBatchResult{Pgns: []string{"["}}}})
	seed(6, &arbiterv1.ReleaseRequest{LeaseId: "x", CannotRun: true})
	seed(7, &arbiterv1.GetJobRequest{JobId: "p1"})
	seed(8, &arbiterv1.CancelJobRequest{JobId: "p1"})
	seed(9, &arbiterv1.RunVerifyUnitRequest{SessionId: "session-1", Key: "k", Unit: &arbiterv1.VerifyUnit{
		Engine: &arbiterv1.VerifyEngine{Name: "e"}, Query: &arbiterv1.VerifyQuery{Depth: 2}}})
	seed(10, &arbiterv1.RegisterRequest{Name: "w", Capabilities: &arbiterv1.WorkerCapabilities{Cores: 4}})
	seed(11, &arbiterv1.CreateCredentialRequest{Name: "n", Role: "client"})
	seed(12, &arbiterv1.ListJobsRequest{Limit: 5})
	seed(13, &arbiterv1.CloseVerifySessionRequest{SessionId: "session-1"})
	seed(15, &arbiterv1.ReportVerifySessionRequest{SessionId: "session-1", Summary: &arbiterv1.VerifySessionSummary{Positions: 1, Bugs: 1},
		Positions: []*arbiterv1.VerifyPositionReport{{Status: "bug", Findings: []*arbiterv1.VerifyFinding{{Moves: []string{"e2e4"}}}}}})
	seed(14, &arbiterv1.SubmitSpsaRequest{Spec: &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
		Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002}}, Pairs: 2,
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 100}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}}}})

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, method byte, data []byte) {
		ft, err := fuzzSetup(dir)
		if err != nil {
			t.Fatal(err)
		}
		jobs, workers := arbiterv1.NewJobServiceClient(ft.admin), arbiterv1.NewWorkerServiceClient(ft.worker)
		verify, admin := arbiterv1.NewVerifyServiceClient(ft.admin), arbiterv1.NewAdminServiceClient(ft.admin)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		call := func(m proto.Message, do func() error) {
			if proto.Unmarshal(data, m) != nil {
				return
			}
			err := do()
			if status.Code(err) == codes.Internal || status.Code(err) == codes.Unknown {
				t.Fatalf("method %d, request %v: %v", method, m, err)
			}
		}
		switch method % 16 {
		case 0:
			m := &arbiterv1.SubmitPerftRequest{}
			call(m, func() error { _, err := jobs.SubmitPerft(ctx, m); return err })
		case 1:
			m := &arbiterv1.SubmitMatchRequest{}
			call(m, func() error { _, err := jobs.SubmitMatch(ctx, m); return err })
		case 2:
			m := &arbiterv1.LeaseRequest{}
			call(m, func() error {
				m.WorkerId, m.Wait = ft.workerID, durationpb.New(0)
				_, err := workers.Lease(ctx, m)
				return err
			})
		case 3:
			m := &arbiterv1.HeartbeatRequest{}
			call(m, func() error { m.WorkerId = ft.workerID; _, err := workers.Heartbeat(ctx, m); return err })
		case 4, 5:
			m := &arbiterv1.SubmitRequest{}
			call(m, func() error { m.WorkerId = ft.workerID; _, err := workers.Submit(ctx, m); return err })
		case 6:
			m := &arbiterv1.ReleaseRequest{}
			call(m, func() error { m.WorkerId = ft.workerID; _, err := workers.Release(ctx, m); return err })
		case 7:
			m := &arbiterv1.GetJobRequest{}
			call(m, func() error { _, err := jobs.GetJob(ctx, m); return err })
		case 8:
			m := &arbiterv1.CancelJobRequest{}
			call(m, func() error { _, err := jobs.CancelJob(ctx, m); return err })
		case 9:
			m := &arbiterv1.RunVerifyUnitRequest{}
			call(m, func() error { m.Wait = durationpb.New(0); _, err := verify.RunVerifyUnit(ctx, m); return err })
		case 10:
			m := &arbiterv1.RegisterRequest{}
			call(m, func() error { _, err := workers.Register(ctx, m); return err })
		case 11:
			m := &arbiterv1.CreateCredentialRequest{}
			call(m, func() error { _, err := admin.CreateCredential(ctx, m); return err })
		case 12:
			m := &arbiterv1.ListJobsRequest{}
			call(m, func() error { _, err := jobs.ListJobs(ctx, m); return err })
		case 13:
			m := &arbiterv1.CloseVerifySessionRequest{}
			call(m, func() error { _, err := verify.CloseVerifySession(ctx, m); return err })
		case 14:
			m := &arbiterv1.SubmitSpsaRequest{}
			call(m, func() error { _, err := jobs.SubmitSpsa(ctx, m); return err })
		case 15:
			m := &arbiterv1.ReportVerifySessionRequest{}
			call(m, func() error { _, err := verify.ReportVerifySession(ctx, m); return err })
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<30 {
			t.Fatalf("method %d: one call allocated %d MB", method, grew>>20)
		}
	})
}
