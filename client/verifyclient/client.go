// Package verifyclient is the client side of `arbiter verify --coordinator`: a
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
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// Config says which engine to ask for and how.
type Config struct {
	Client *clusterclient.Client
	// Name is the engine's name on the workers; Spec supplies the
	// arguments, protocol and options (its Cmd is not sent).
	Name string
	Spec verify.EngineSpec
	// Timeout is the engine's limit per query on the worker.
	Timeout time.Duration
	// Notice, when set, is told once about conditions worth a line on
	// stderr (no worker has the engine yet, the coordinator is away).
	Notice func(msg string)
	// Retry is the backoff while the coordinator is away (no Base and
	// Cap: clusterclient.Persistent).
	Retry clusterclient.Policy
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
	refused error // the first refusal (*clusterclient.Error)
}

// New starts a session (an id; nothing is sent until the first query).
func New(cfg Config) *Engine {
	b := make([]byte, 8)
	crand.Read(b)
	if cfg.Retry.Base == 0 && cfg.Retry.Cap == 0 {
		cfg.Retry = clusterclient.Persistent
	}
	return &Engine{cfg: cfg, client: cfg.Client.Verify, session: "s-" + hex.EncodeToString(b),
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
	ctx, cancel := context.WithTimeout(context.Background(), clusterclient.ShortTimeout)
	defer cancel()
	_, err := e.client.CloseVerifySession(ctx, &arbiterv1.CloseVerifySessionRequest{SessionId: e.session})
	return e.cfg.Client.Err("close verify session", err)
}

// Refused is the first refusal of a query by the coordinator (a bad
// request, a refused credential), or nil. A refusal is the same for every
// query, so the caller should stop.
func (e *Engine) Refused() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refused
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

const poll = 10 * time.Second

// Divide submits the query as a unit (named by its content) and waits for
// the result, asking again after each long poll and across coordinator
// restarts. An engine failure on the worker comes back as *verify.EngineError.
func (e *Engine) Divide(ctx context.Context, q verify.Query) (verify.Divide, error) {
	unit := verifyproto.UnitProto(e.cfg.Name, e.cfg.Spec, q, e.cfg.Timeout)
	// The first poll is short, so that a missing engine is reported soon.
	req := &arbiterv1.RunVerifyUnitRequest{SessionId: e.session, Key: verifyproto.Key(unit), Unit: unit, Wait: durationpb.New(time.Second)}
	b := clusterclient.NewBackoff(e.cfg.Retry)
	for ; ; req.Wait = durationpb.New(poll) {
		cctx, cancel := context.WithTimeout(ctx, poll+clusterclient.LongPollMargin)
		resp, err := e.client.RunVerifyUnit(cctx, req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return verify.Divide{}, ctx.Err()
			}
			if !clusterclient.Retryable(err) {
				cerr := e.cfg.Client.Err("verify query", err)
				e.mu.Lock()
				if e.refused == nil {
					e.refused = cerr
				}
				e.mu.Unlock()
				return verify.Divide{}, fmt.Errorf("coordinator refused the query (%s): %w", q, cerr)
			}
			e.notice("away", e.cfg.Client.Away(err)+"; retrying")
			if !b.Wait(ctx, err) {
				if ctx.Err() != nil {
					return verify.Divide{}, ctx.Err()
				}
				return verify.Divide{}, e.cfg.Client.Err("verify query", err)
			}
			continue
		}
		b.Reset()
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
