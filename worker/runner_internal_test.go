package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// stateRunner is a runner made per worker (Runner.New): what it offers
// depends on the worker's settings, and it counts its Close calls.
type stateRunner struct {
	caps   []string
	closed *atomic.Int32
}

func (s stateRunner) Capabilities() []string { return s.caps }
func (s stateRunner) Close()                 { s.closed.Add(1) }
func (s stateRunner) Run(context.Context, Host, proto.Message) (proto.Message, error) {
	return wrapperspb.Bool(true), nil
}

var stateClosed atomic.Int32

func init() {
	// Two runners made per worker: the first offers "fake-state-HASHMB"
	// and fails to start at --hash 13; both offer "fake-dup" at --hash 11.
	RegisterRunner(Runner{Unit: func() proto.Message { return &wrapperspb.UInt32Value{} },
		New: func(s Settings) (Instance, error) {
			switch s.HashMB {
			case 13:
				return nil, fmt.Errorf("no state at %d MB", s.HashMB)
			case 11:
				return stateRunner{caps: []string{"fake-dup"}, closed: &stateClosed}, nil
			}
			return stateRunner{caps: []string{fmt.Sprintf("fake-state-%d", s.HashMB)}, closed: &stateClosed}, nil
		}})
	RegisterRunner(Runner{Unit: func() proto.Message { return &wrapperspb.UInt64Value{} },
		New: func(s Settings) (Instance, error) {
			var caps []string
			if s.HashMB == 11 {
				caps = []string{"fake-dup"}
			}
			return stateRunner{caps: caps, closed: &stateClosed}, nil
		}})
}

// TestRunnersMadePerWorker: a runner registered with New is made on each
// worker from its settings, offers what its instance says, and is closed
// once; a New that fails, or two instances offering one capability, fail
// worker.New naming the runner and the capability. The registry refuses a
// runner with New and a fixed Capability or Run too.
func TestRunnersMadePerWorker(t *testing.T) {
	conn, err := grpc.NewClient("passthrough:///127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	newWorker := func(hashMB int) (*Worker, error) {
		return New(Config{Conn: conn, Threads: 1, HashMB: hashMB, BenchDepth: -1})
	}
	w, err := newWorker(7)
	if err != nil {
		t.Fatal(err)
	}
	if caps := w.Capabilities(); !slices.Contains(caps, "fake-state-7") || slices.Contains(caps, "fake-dup") {
		t.Errorf("a worker with --hash 7 offers %q; want fake-state-7 and no fake-dup", caps)
	}
	if caps := w.capabilities(); !slices.Contains(caps, "fake-state-7") {
		t.Errorf("the worker registers with %q, without its runner's fake-state-7", caps)
	}
	before := stateClosed.Load()
	closeRunners(w.runners)
	if got := stateClosed.Load() - before; got != 2 {
		t.Errorf("closing the worker's runners closed %d of the two made per worker", got)
	}
	if _, err := newWorker(13); err == nil || !strings.Contains(err.Error(), "google.protobuf.UInt32Value") ||
		!strings.Contains(err.Error(), "no state at 13 MB") {
		t.Errorf("a runner that cannot start: %v", err)
	}
	if _, err := newWorker(11); err == nil || !strings.Contains(err.Error(), `both offer capability "fake-dup"`) {
		t.Errorf("two runners offering fake-dup: %v", err)
	}
	run := func(context.Context, Host, proto.Message) (proto.Message, error) { return nil, nil }
	newFn := func(Settings) (Instance, error) { return nil, nil }
	unit := func() proto.Message { return &wrapperspb.FloatValue{} }
	for name, r := range map[string]Runner{
		"New and Capability": {Unit: unit, Capability: "x-2", New: newFn},
		"New and Run":        {Unit: unit, Run: run, New: newFn},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterRunner did not panic", name)
				}
			}()
			RegisterRunner(r)
		}()
	}
}

// TestPayloadAndAnswer: the worker takes a unit's message out of
// whichever field of WorkUnit.payload carries it (a typed field or the
// plugin Any) and sends the result back the same way: in the typed field
// of SubmitRequest.result that takes its type, or packed. A result of a
// type no typed field takes is an error naming the type (the control).
func TestPayloadAndAnswer(t *testing.T) {
	typed := &arbiterv1.WorkUnit{Payload: &arbiterv1.WorkUnit_GamePairs{GamePairs: &arbiterv1.GamePairBatch{TestId: "t-3"}}}
	msg, packed := payloadOf(typed)
	if msg == nil || packed != nil || msg.Descriptor().FullName() != "arbiter.v1.GamePairBatch" ||
		msg.Interface().(*arbiterv1.GamePairBatch).GetTestId() != "t-3" {
		t.Errorf("typed unit: %v, packed %v", msg, packed)
	}
	a, err := anypb.New(wrapperspb.String("hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg, packed = payloadOf(&arbiterv1.WorkUnit{Payload: &arbiterv1.WorkUnit_Plugin{Plugin: a}})
	if msg == nil || packed == nil || packed.MessageName() != "google.protobuf.StringValue" {
		t.Errorf("packed unit: %v, packed %v", msg, packed)
	}
	if msg, packed = payloadOf(&arbiterv1.WorkUnit{UnitId: "u"}); msg != nil || packed != nil {
		t.Errorf("a unit with no payload: %v, %v", msg, packed)
	}

	req, err := answerOf(&arbiterv1.GamePairBatchResult{Pgns: []string{"1-0"}}, false)
	if err != nil || len(req.GetGamePairs().GetPgns()) != 1 {
		t.Errorf("typed result: %v, %v", req, err)
	}
	req, err = answerOf(wrapperspb.String("HI"), true)
	if err != nil || req.GetPlugin().MessageName() != "google.protobuf.StringValue" {
		t.Errorf("packed result: %v, %v", req, err)
	}
	if req, err := answerOf(wrapperspb.String("HI"), false); err == nil || !strings.Contains(err.Error(), "google.protobuf.StringValue") {
		t.Errorf("a typed unit's result no field takes: %v, %v", req, err)
	}
}
