//go:build unix

package e2e

import (
	"path/filepath"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestDoubledCountCaughtByDefault: a coordinator started with no
// verification flag, a perft job that sets no verify fraction, and one
// worker (its own identity) that doubles every count it sends. The default
// fraction has another identity recompute a unit of the liar's, the
// dispute settles against it, the liar's other units are computed again
// by honest identities, and the total is exact. Without a default fraction
// every doubled count would enter the total unchecked.
func TestDoubledCountCaughtByDefault(t *testing.T) {
	addr, data := proctest.FreeAddr(t), filepath.Join(t.TempDir(), "data")
	coordinator(t, addr, data, "--lease-duration", "10s")
	admin := dial(t, addr, token)
	liar := newFakeWorker(t, dial(t, addr, workerToken(t, addr)), "liar")
	// A second identity on the farm when the job is submitted: the
	// default verification needs two witnesses to mean anything.
	newFakeWorker(t, dial(t, addr, workerToken(t, addr)), "idle")

	job := submit(t, admin, &arbiterv1.PerftSpec{Depth: 5})
	if f := job.GetPerft().GetVerifyFraction(); f <= 0 || f > 0.2 {
		t.Fatalf("verify fraction of a job that sets none: %v, want the coordinator's small default", f)
	}
	// The liar computes the first units (one in twenty is verified) and
	// doubles each count.
	lied := 0
	for lied < 25 {
		l := liar.lease()
		counts := compute(t, l)
		for i := range counts {
			counts[i] *= 2
		}
		out, err := liar.submit(l, counts)
		if err != nil || out != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
			t.Fatalf("the liar's run %d: %v %v (a doubled count must be plausible for this test)", lied, out, err)
		}
		lied++
	}
	startWorker(t, addr)
	startWorker(t, addr)
	final := waitFor(t, admin, job.GetJobId(), 120*time.Second, "job done", done)
	if final.GetNodes() != "4865609" {
		t.Fatalf("perft 5 = %s, want 4865609: the liar's doubled counts were not caught", final.GetNodes())
	}
	p := final.GetProgress()
	if p.GetMismatches() == 0 || p.GetUnitsVerified() == 0 {
		t.Fatalf("progress %v: want the liar's run of a verified unit to be a mismatch, and verified units", p)
	}
	t.Logf("units %d, verified %d, mismatches %d (%d settled)", p.GetUnitsTotal(), p.GetUnitsVerified(), p.GetMismatches(), p.GetMismatchesSettled())
}
