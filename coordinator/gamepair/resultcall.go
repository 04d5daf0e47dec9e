package gamepair

import (
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// UnknownUnit is the error of a unit id that names no batch of the
// workload.
func UnknownUnit(unit string) error {
	return apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "unknown unit %s", apierr.Q(unit))
}

// ResultOf is a batch result as a game workload's Result receives it, with
// its type checked and its unit id split into the job and the batch index.
// A result of another kind is Malformed; a unit id that names no batch is
// UnknownUnit.
func ResultOf(rc core.ResultCall) (r *arbiterv1.GamePairBatchResult, jobID string, idx int, err error) {
	unit := rc.Lease.UnitID
	r, ok := rc.Result.(*arbiterv1.GamePairBatchResult)
	if !ok || r == nil {
		return nil, "", 0, Malformed("unit %s is a game-pair batch; the result is not a game-pair result", apierr.Q(unit))
	}
	if jobID, idx, ok = ParseUnit(unit); !ok {
		return nil, "", 0, UnknownUnit(unit)
	}
	return r, jobID, idx, nil
}

// ResultLog is log with what names a batch result: its job, unit, worker
// and lease.
func ResultLog(log *zap.Logger, jobID string, rc core.ResultCall) *zap.Logger {
	return log.With(zap.String(logging.JobID, jobID), zap.String(logging.UnitID, rc.Lease.UnitID), zap.String(logging.WorkerID, rc.Worker.ID),
		zap.String(logging.LeaseID, rc.Lease.ID))
}
