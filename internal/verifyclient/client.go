// Package verifyclient is the client side of `arbiter verify --cluster`: a
// verify.Engine whose Divide asks the coordinator for one verify unit and
// waits for the worker's answer. verify.Verify runs on it unchanged, so
// the descent, the comparison with Arbiter's counts and the reasons are
// those of a local run.
package verifyclient

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/internal/verifyproto"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

// Config says which engine to ask for and how.
type Config struct {
	Conn grpc.ClientConnInterface
	// Name is the engine's name on the workers; Spec supplies the
	// arguments, protocol and options (its Cmd is not sent).
	Name string
	Spec verify.EngineSpec
	// Timeout is the engine's limit per query on the worker.
	Timeout time.Duration
	// Notice, when set, is told once about conditions worth a line on
	// stderr (no worker has the engine yet, the coordinator is away).
	Notice func(msg string)
}

// Engine is a verify.Engine answered by the cluster. It is safe for
// concurrent use: positions can be verified in parallel on one Engine.
type Engine struct {
	cfg     Config
	client  arbiterv1.VerifyServiceClient
	session string

	mu      sync.Mutex
	noticed map[string]bool
	units   int
	workers map[string]int
}

// New starts a session (an id; nothing is sent until the first query).
func New(cfg Config) *Engine {
	b := make([]byte, 8)
	crand.Read(b)
	return &Engine{cfg: cfg, client: arbiterv1.NewVerifyServiceClient(cfg.Conn), session: "s-" + hex.EncodeToString(b),
		noticed: map[string]bool{}, workers: map[string]int{}}
}

// Session is the session id (the coordinator's logs name it as job
// "verify.SESSION").
func (e *Engine) Session() string { return e.session }

// Name is the engine as the report names it.
func (e *Engine) Name() string {
	s := e.cfg.Spec
	s.Cmd = e.cfg.Name
	return s.String() + " (cluster)"
}

// Close drops the session's pending units on the coordinator.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.client.CloseVerifySession(ctx, &arbiterv1.CloseVerifySessionRequest{SessionId: e.session})
	return err
}

// Stats returns how many units were answered, and by which workers.
func (e *Engine) Stats() (units int, byWorker map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	byWorker = make(map[string]int, len(e.workers))
	for k, v := range e.workers {
		byWorker[k] = v
	}
	return e.units, byWorker
}

func (e *Engine) notice(key, msg string) {
	e.mu.Lock()
	seen := e.noticed[key]
	e.noticed[key] = true
	e.mu.Unlock()
	if !seen && e.cfg.Notice != nil {
		e.cfg.Notice(msg)
	}
}

// retryable: the coordinator is away or restarting; ask again.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Unknown, codes.Internal:
		return true
	}
	return false
}

const poll = 10 * time.Second

// Divide submits the query as a unit (named by its content) and waits for
// the result, asking again after each long poll and across coordinator
// restarts. An engine failure on the worker comes back as *verify.EngineError.
func (e *Engine) Divide(ctx context.Context, q verify.Query) (verify.Divide, error) {
	unit := verifyproto.UnitProto(e.cfg.Name, e.cfg.Spec, q, e.cfg.Timeout)
	// The first poll is short, so that a missing engine is reported soon.
	req := &arbiterv1.RunVerifyUnitRequest{SessionId: e.session, Key: verifyproto.Key(unit), Unit: unit, Wait: durationpb.New(time.Second)}
	attempt := 0
	for ; ; req.Wait = durationpb.New(poll) {
		cctx, cancel := context.WithTimeout(ctx, poll+15*time.Second)
		resp, err := e.client.RunVerifyUnit(cctx, req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return verify.Divide{}, ctx.Err()
			}
			if !retryable(err) {
				return verify.Divide{}, fmt.Errorf("coordinator refused the query (%s): %s", q, status.Convert(err).Message())
			}
			e.notice("away", fmt.Sprintf("coordinator unavailable (%s); retrying", status.Convert(err).Message()))
			d := min(100*time.Millisecond<<min(attempt, 5), 3*time.Second)
			d = d/2 + rand.N(d/2+1)
			attempt++
			select {
			case <-ctx.Done():
				return verify.Divide{}, ctx.Err()
			case <-time.After(d):
			}
			continue
		}
		attempt = 0
		if resp.GetState() == arbiterv1.VerifyUnitState_VERIFY_UNIT_STATE_DONE {
			e.mu.Lock()
			e.units++
			e.workers[resp.GetWorkerId()]++
			e.mu.Unlock()
			return verifyproto.ResultFromProto(resp.GetResult(), e.Name(), q)
		}
		if resp.GetCapableWorkers() == 0 {
			e.notice("nocap", fmt.Sprintf("no worker has engine %q yet (start one with --verify-engine name=%s,cmd=PATH); waiting", e.cfg.Name, e.cfg.Name))
		}
	}
}
