package gamepair

import (
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// EvBench records the bench speed (nodes per second) a worker had when it
// played a batch of the job, when that is new for the job: the job's
// per-worker rows show it, not the worker's latest registration, so a
// finished job's figures stay what they were during it (also after a
// restart, when the workers' registrations are read again).
const EvBench = "bench"

// BenchEvent returns the EvBench event to store with a batch worker
// workerID played at speed nps, or nil when the job has that figure for
// it already (or nps is unknown).
func (ws *Workers) BenchEvent(jobID, unitID, workerID string, nps uint64, at time.Time) []store.Event {
	if nps == 0 || ws.bench[workerID] == nps {
		return nil
	}
	return []store.Event{{JobID: jobID, UnitID: unitID, WorkerID: workerID, Kind: EvBench, Detail: strconv.FormatUint(nps, 10), At: at}}
}

// NoteBench records, once its event is stored, the speed worker workerID
// played the job at.
func (ws *Workers) NoteBench(workerID string, nps uint64) {
	if nps != 0 {
		ws.bench[workerID] = nps
	}
}

// replayBench applies a stored EvBench event; an unreadable detail is
// skipped (the row falls back to the worker's registration).
func (ws *Workers) replayBench(e store.Event) {
	if n, err := strconv.ParseUint(e.Detail, 10, 64); err == nil && n > 0 {
		ws.bench[e.WorkerID] = n
	}
}
