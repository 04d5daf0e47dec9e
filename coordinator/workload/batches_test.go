package workload

import (
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/core"
)

// TestBatchesBookkeeping: a lease that ends without a result puts its
// batch back to be served first, unless its result is stored or the job is
// over; a worker that cannot run the job is excluded; a lease the book does
// not hold (another worker's) changes nothing; adoption keeps a batch with
// its signed holder unless another holds it now.
func TestBatchesBookkeeping(t *testing.T) {
	b := NewBatches[uint32]()
	b.Open[1], b.Open[2], b.Open[3] = "w1", "w1", "w2"
	if b.Ended(3, core.Lease{WorkerID: "w1"}, core.End{Expired: true}, false) {
		t.Error("w1 ended w2's lease")
	}
	if !b.Ended(1, core.Lease{WorkerID: "w1"}, core.End{Expired: true}, false) || len(b.Retry) != 1 || b.Retry[0] != 1 {
		t.Errorf("expired lease: retry %v", b.Retry)
	}
	if !b.Ended(2, core.Lease{WorkerID: "w1"}, core.End{CannotRun: true, Reason: "no engine"}, true) || len(b.Retry) != 1 {
		t.Errorf("stored batch served again: retry %v", b.Retry)
	}
	if _, ok := b.Excluded["w1"]; !ok {
		t.Error("a worker that cannot run the job is not excluded")
	}
	if got := b.Adopt(3, "w3"); got != core.AdoptLost {
		t.Errorf("adopt of a batch another holds: %v", got)
	}
	if got := b.Adopt(1, "w3"); got != core.AdoptActive || len(b.Retry) != 0 || b.Open[1] != "w3" {
		t.Errorf("adopt of a batch given back: %v, retry %v, open %v", got, b.Retry, b.Open)
	}
	if n := b.ActiveWorkers(); n != 2 {
		t.Errorf("%d active workers, want 2", n)
	}
	b.Release(1, "w3")
	if _, open := b.Open[1]; open {
		t.Error("released batch still open")
	}
}
