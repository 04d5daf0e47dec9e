package verifyclient

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

// scriptedVerify answers RunVerifyUnit with the scripted errors in turn,
// then with a finished unit.
type scriptedVerify struct {
	arbiterv1.UnimplementedVerifyServiceServer
	mu    sync.Mutex
	errs  []error
	calls int
}

func (s *scriptedVerify) RunVerifyUnit(context.Context, *arbiterv1.RunVerifyUnitRequest) (*arbiterv1.RunVerifyUnitResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.calls
	s.calls++
	if i < len(s.errs) {
		return nil, s.errs[i]
	}
	return &arbiterv1.RunVerifyUnitResponse{State: arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_DONE, WorkerId: "w-1",
		Result: &arbiterv1.VerifyUnitResult{Lines: []*arbiterv1.VerifyDivideLine{{Move: "e2e4", Nodes: "1"}}, Total: "1"}}, nil
}

func (s *scriptedVerify) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func start(t *testing.T, svc *scriptedVerify) *Engine {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	arbiterv1.RegisterVerifyServiceServer(srv, svc)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := clusterclient.Connect(clusterclient.Options{Address: lis.Addr().String(), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return New(Config{Client: c, Name: "sf", Timeout: time.Second,
		Retry: clusterclient.Policy{Base: time.Millisecond, Cap: 5 * time.Millisecond}})
}

var query = verify.Query{FEN: engine.StartFEN, Depth: 1}

// TestDivideRetries: a coordinator that is away or busy (Unavailable,
// Aborted) is asked again; the answer counts once.
func TestDivideRetries(t *testing.T) {
	svc := &scriptedVerify{errs: []error{status.Error(codes.Unavailable, "restarting"), status.Error(codes.Aborted, "conflict")}}
	e := start(t, svc)
	d, err := e.Divide(context.Background(), query)
	if err != nil || d.Total.String() != "1" || svc.Calls() != 3 || e.Refused() != nil {
		t.Fatalf("divide %v, err %v after %d calls (refused %v)", d, err, svc.Calls(), e.Refused())
	}
	if units, by := e.Stats(); units != 1 || by["w-1"] != 1 {
		t.Errorf("stats %d %v", units, by)
	}
}

// TestDivideRefused: a refusal is not retried, and is kept for the caller.
func TestDivideRefused(t *testing.T) {
	for _, err := range []error{status.Error(codes.InvalidArgument, "unit.depth too large"), status.Error(codes.Internal, "bug")} {
		svc := &scriptedVerify{errs: []error{err, err}}
		e := start(t, svc)
		_, got := e.Divide(context.Background(), query)
		if got == nil || svc.Calls() != 1 || e.Refused() == nil || !strings.Contains(got.Error(), status.Convert(err).Message()) {
			t.Errorf("%v: err %v after %d calls, refused %v", err, got, svc.Calls(), e.Refused())
		}
		if strings.Contains(e.Refused().Error(), "rpc error") {
			t.Errorf("refusal shows the gRPC prefix: %v", e.Refused())
		}
	}
}
