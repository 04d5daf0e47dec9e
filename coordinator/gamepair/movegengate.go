package gamepair

// The movegen gate of a test (EngineSpec.movegen_gate): a worker runs
// verify's gate through each gated engine before it plays a batch, and
// answers the batch with a MovegenGateFailure instead of games when an
// engine's generator is wrong. That answer fails the test here, with the
// verdict as its error; nothing of the batch is counted.
//
// Invariants: a gated test goes only to workers that advertise
// capability.MovegenGate (FitsCaps), so no batch is played by a worker
// that skipped the gate; a failure counts only from the batch's lease
// holder (the core's lease check) and only once
// verifyproto.CheckGateFailure found it true of chess on our own
// generator; a refused failure is the worker's malformed result, and the
// batch goes back to the queue. Only a trusted identity's failure fails a
// test (trust.go: the word of an untrusted identity proves nothing, nor
// does a second one's agreeing): an untrusted identity's bars its worker
// from the test with the verdict as its refusal, and the batch waits for
// another worker's gate.

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// EvMovegenGate is the event of a worker whose gate failed the job, with
// the verdict (the job's error says the same).
const EvMovegenGate = "movegen-gate"

// checkGate refuses a gate an engine cannot have: an unknown protocol, or
// a gate on the embedded engine (Arbiter's own generator) or an xboard
// engine (no `go perft`).
func checkGate(which string, e *arbiterv1.EngineSpec) error {
	g := e.GetMovegenGate()
	if g == "" {
		return nil
	}
	q := apierr.Q(e.GetName())
	if err := verify.CheckGateProto(g); err != nil {
		return apierr.Invalid("%s %s: movegen gate %s: %v", which, q, apierr.Q(g), err)
	}
	if matchspec.IsBuiltin(e) {
		return apierr.Invalid("%s %s: movegen gate: the builtin engine's generator is Arbiter's own; gate another engine", which, q)
	}
	if e.GetProtocol() == "xboard" {
		return apierr.Invalid("%s %s: movegen gate: an xboard engine has no go perft", which, q)
	}
	return nil
}

// gatedEngines are the names of the batch's engines with the gate on.
func gatedEngines(b *arbiterv1.GamePairBatch) []string {
	var out []string
	for _, e := range []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()} {
		if e.GetMovegenGate() != "" {
			out = append(out, e.GetName())
		}
	}
	return out
}

// gateFailed answers a batch result that carries a gate failure: checked,
// it fails the job with the verdict; refused, it is a malformed result.
func (s *Set[J]) gateFailed(ctx context.Context, rc core.ResultCall, jobID string, idx int, f *arbiterv1.MovegenGateFailure) (core.Outcome, error) {
	unit := rc.Lease.UnitID
	s.Mu.Lock()
	j, out, ok, err := s.batchOf(unit, jobID, idx)
	if !ok {
		s.Mu.Unlock()
		return out, err
	}
	sent, err := s.Hooks.Unit(j, idx, 0)
	done := j.Base().Done
	s.Mu.Unlock()
	if err != nil {
		return core.Outcome{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "unit %s: %v", apierr.Q(unit), err)
	}
	log := ResultLog(s.Logger, jobID, rc)
	if err := verifyproto.CheckGateFailure(f, gatedEngines(sent.GetGamePairs())); err != nil {
		log.Warn("movegen gate failure refused", zap.Error(err))
		return core.Outcome{}, Malformed("unit %s: %v", apierr.Q(unit), err)
	}
	if !s.Trust.Trusted(rc.Worker.Owner) {
		return s.untrustedGateFailure(j, idx, rc, f.GetMessage(), log), nil
	}
	reason := "refused before its first game: " + f.GetMessage()
	if done > 0 {
		reason = fmt.Sprintf("failed after %d counted batches: %s", done, f.GetMessage())
	}
	s.queue.Add(j.Base().Event(unit, rc.Worker.ID, EvMovegenGate, f.GetMessage(), s.Now()))
	if err := s.Fail(ctx, jobID, reason); err != nil {
		if apierr.ReasonOf(err) == apierr.ReasonJobFinished {
			return core.Outcome{Verdict: core.Discarded}, nil // ended meanwhile
		}
		return core.Outcome{}, err
	}
	log.Warn("movegen gate failed; job failed", zap.String("verdict", f.GetMessage()))
	return core.Outcome{Verdict: core.Accepted, JobOver: true, EndUnitLeases: true}, nil
}

// untrustedGateFailure answers an untrusted identity's checked gate
// failure: its worker is barred from j (the verdict is its refusal, on
// the test's page and in status), and the batch is open again for a
// worker whose verdict counts.
func (s *Set[J]) untrustedGateFailure(j J, idx int, rc core.ResultCall, verdict string, log *zap.Logger) core.Outcome {
	wk := rc.Worker
	s.Mu.Lock()
	defer s.Mu.Unlock()
	b := j.Base()
	if b.Workers.Refuse(wk.ID, verdict) {
		log.Warn("movegen gate failure of an untrusted identity: its worker is barred from the test, which waits for a trusted one's gate")
	}
	s.queue.Add(b.Event(rc.Lease.UnitID, wk.ID, EvRefused, verdict, s.Now()))
	if rc.Live {
		b.Batches.Drop(idx, wk.ID)
	}
	if b.Batches.Reopen(idx) && s.Host != nil {
		s.Host.WorkAvailable()
	}
	return core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}
}
