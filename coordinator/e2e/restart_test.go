//go:build unix

package e2e

// What `arbiter status JOB --json` says of a finished job must not depend
// on whether the coordinator restarted since (issue 11): jobs of every kind
// run to their end on a real coordinator process, their status is taken,
// the coordinator is SIGKILLed and started again on the same data dir, and
// the whole JSON of each job is compared.

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

func TestStatusIdenticalAfterRestart(t *testing.T) { statusIdenticalAfterRestart(t) }

// The same on PostgreSQL (a real server, testing/pgtest): every kind of
// job through the real binary and gRPC, SIGKILL, restart, same status.
func TestStatusIdenticalAfterRestartPostgres(t *testing.T) {
	onSQLiteOnly(t) // on PostgreSQL, TestStatusIdenticalAfterRestart is this test
	dsn := pgtest.Start(t).NewDatabase(t)
	r := statusIdenticalAfterRestart(t, "--store", dsn)
	data, ids := r.data, r.ids
	// It ran on PostgreSQL: every job is there, and no SQLite file was made.
	if _, err := os.Stat(filepath.Join(data, "coordinator.db")); !os.IsNotExist(err) {
		t.Errorf("a SQLite store in the data dir of a PostgreSQL coordinator (%v)", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var jobs, pgns int
	if err := db.QueryRow("SELECT COUNT(*), (SELECT COUNT(*) FROM pgns) FROM jobs").Scan(&jobs, &pgns); err != nil || jobs != len(ids) || pgns == 0 {
		t.Fatalf("PostgreSQL holds %d jobs and %d games (%v), want %d jobs and games", jobs, pgns, err, len(ids))
	}
}

// restarted is what statusIdenticalAfterRestart leaves: the coordinator
// running again, its data dir and address, the jobs, and their status.
type restarted struct {
	co         *proc
	addr, data string
	ids        []string
	status     func() map[string]string // each job's status --json ("": the list)
	after      map[string]string
}

// statusIdenticalAfterRestart runs the test on the store storeArgs
// choose (none: SQLite in the data dir).
func statusIdenticalAfterRestart(t *testing.T, storeArgs ...string) restarted {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	co := coordinator(t, addr, data, storeArgs...)
	admin := dial(t, addr, token)

	// Before any real worker joins, two test workers set up what real
	// workers never do on purpose: a lost lease and a wrong count.
	lostTest := submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "8", "--batch-pairs", "2")
	lost := fakeWorkerWith(t, dial(t, addr, workerToken(t, addr)), "lost", "game-pair")
	if l := lost.lease(); l.GetUnit().GetJobId() != lostTest {
		t.Fatalf("the lost worker leased %s, want a batch of %s", l.GetUnit().GetUnitId(), lostTest)
	}
	// It never heartbeats: the lease expires (1s) and counts as a
	// disconnect of that worker.
	mismatch := submit(t, admin, &arbiterv1.PerftSpec{Depth: 5, VerifyFraction: 1})
	liar := fakeWorkerWith(t, dial(t, addr, workerToken(t, addr)), "liar", "perft")
	l := liar.lease()
	if l.GetUnit().GetJobId() != mismatch.GetJobId() {
		t.Fatalf("the liar leased %s, want a unit of %s", l.GetUnit().GetUnitId(), mismatch.GetJobId())
	}
	counts := compute(t, l)
	counts[0]++ // plausible, but wrong
	if got, err := liar.submit(l, counts); err != nil || got != arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED {
		t.Fatalf("the liar's run: %v, %v", got, err)
	}

	verified := submit(t, admin, &arbiterv1.PerftSpec{Depth: 5, VerifyFraction: 1, SplitPly: 2}).GetJobId()
	sprtArgs := append([]string{"submit", "sprt"}, clientArgs(addr)...)
	sprtArgs = append(sprtArgs, "--engine", engDefault, "--engine", engWeak, "--each", "nodes=2000",
		"--openings", "file="+book+",order=random,seed=5", "--sprt", "elo0=0,elo1=40,model=logistic", "--batch-pairs", "4")
	out, code := cli(t, sprtArgs...)
	if code != 0 {
		t.Fatalf("submit sprt: exit %d: %s", code, out)
	}
	sprtTest := jobID(out)
	if !strings.Contains(out, "Note: without --games the match plays the 200 openings") {
		t.Errorf("submit sprt at fixed nodes on a 200-opening book: no note that its openings repeat:\n%s", out)
	}
	matchTest := submitTest(t, addr, "match", "--each", "nodes=1000", "--games", "8", "--batch-pairs", "2")
	cancelled := submit(t, admin, &arbiterv1.PerftSpec{Depth: 7, SplitPly: 3}).GetJobId()

	startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	waitFor(t, admin, cancelled, 120*time.Second, "the long perft under way", func(j *arbiterv1.Job) bool {
		return j.GetProgress().GetUnitsDone() >= 2
	})
	if out, code := cli(t, append([]string{"cancel", cancelled}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("cancel: exit %d: %s", code, out)
	}
	for _, id := range []string{mismatch.GetJobId(), verified, sprtTest, matchTest, lostTest} {
		waitFor(t, admin, id, 5*time.Minute, id+" done", done)
	}
	// The workers stay: they ride out the restart as they would in a
	// farm. A finished job holds no leases, so nothing live is compared.

	// Each job shows what it is meant to show, so that the comparison
	// below compares something.
	ids := []string{verified, cancelled, sprtTest, matchTest, lostTest, mismatch.GetJobId()}
	get := func(id string) *arbiterv1.Job { return getJob(t, admin, id) }
	if p := get(verified).GetProgress(); p.GetUnitsVerified() == 0 || p.GetUnitsVerified() != p.GetUnitsTotal() {
		t.Fatalf("verified job: %d of %d units verified", p.GetUnitsVerified(), p.GetUnitsTotal())
	}
	if j := get(cancelled); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || j.GetProgress().GetUnitsDone() == 0 {
		t.Fatalf("cancelled job: %v with %d units done", j.GetState(), j.GetProgress().GetUnitsDone())
	}
	if s := get(sprtTest).GetMatchProgress().GetSprtState(); s != "accepted" {
		t.Fatalf("SPRT %q, want accepted", s)
	}
	if g := get(matchTest).GetMatchProgress().GetGames(); g != 8 {
		t.Fatalf("match: %d games, want 8", g)
	}
	if p := get(mismatch.GetJobId()).GetProgress(); p.GetMismatches() != 1 || p.GetMismatchesSettled() != 1 {
		t.Fatalf("mismatch job: %d mismatches, %d settled; want 1, 1", p.GetMismatches(), p.GetMismatchesSettled())
	}
	disconnects := uint64(0)
	for _, w := range get(lostTest).GetMatchProgress().GetWorkers() {
		if w.GetWorkerId() == lost.id {
			disconnects = w.GetDisconnects()
		}
	}
	if disconnects != 1 {
		t.Fatalf("the lost worker's disconnects: %d, want 1", disconnects)
	}

	// Each job's status, and (under "") the list of all of them.
	status := func() map[string]string {
		m := map[string]string{}
		for _, id := range append(ids, "") {
			args := []string{"status", "--json"}
			if id != "" {
				args = append(args, id)
			}
			out, code := cli(t, append(args, clientArgs(addr)...)...)
			if code != 0 {
				t.Fatalf("status %s: exit %d: %s", id, code, out)
			}
			m[id] = out
		}
		return m
	}
	before := status()
	co.kill(t)
	co = coordinator(t, addr, data, storeArgs...)
	after := status()
	for _, id := range append(ids, "") {
		what := "status " + id + " --json"
		if id == "" {
			what = "status --json (the list)"
		}
		if before[id] != after[id] {
			t.Errorf("%s differs after the restart:\n%s", what, lineDiff(before[id], after[id]))
		} else {
			t.Logf("%s: %d bytes identical", what, len(before[id]))
		}
	}
	return restarted{co: co, addr: addr, data: data, ids: ids, status: status, after: after}
}

// A farm moved from SQLite to PostgreSQL with arbiter store copy answers
// status --json for every job, and the list, byte for byte as before.
func TestStoreCopyStatusIdentical(t *testing.T) {
	onSQLiteOnly(t) // from SQLite, always
	dsn := pgtest.Start(t).NewDatabase(t)
	r := statusIdenticalAfterRestart(t)
	r.co.kill(t)
	out, code := cli(t, "store", "copy", "--from", r.data, "--to", dsn)
	if code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("store copy: exit %d:\n%s", code, out)
	}
	t.Logf("store copy:\n%s", out)
	// Into a database that now holds the farm: refused, status 2.
	if again, code := cli(t, "store", "copy", "--from", r.data, "--to", dsn); code != 2 || !strings.Contains(again, "not empty") {
		t.Fatalf("a second copy: exit %d:\n%s", code, again)
	}
	// The SQLite file moves away: the coordinator must read PostgreSQL.
	if err := os.Rename(filepath.Join(r.data, "coordinator.db"), filepath.Join(r.data, "coordinator.db.moved")); err != nil {
		t.Fatal(err)
	}
	coordinator(t, r.addr, r.data, "--store", dsn)
	onPG := r.status()
	for _, id := range append(r.ids, "") {
		if r.after[id] != onPG[id] {
			t.Errorf("status %s --json differs on PostgreSQL after the copy:\n%s", id, lineDiff(r.after[id], onPG[id]))
		}
	}
}

// lineDiff shows the lines of a and b that differ (- a, + b), with the
// lines they share around them left out.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Longest common subsequence of lines: status JSON is short.
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			i, j = i+1, j+1
		case i < len(al) && (j == len(bl) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "- %s\n", al[i])
			i++
		default:
			fmt.Fprintf(&out, "+ %s\n", bl[j])
			j++
		}
	}
	return out.String()
}

func TestLineDiff(t *testing.T) {
	a := "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}"
	b := "{\n  \"a\": 1,\n  \"c\": 4,\n  \"d\": 5\n}"
	want := "-   \"b\": 2,\n-   \"c\": 3\n+   \"c\": 4,\n+   \"d\": 5\n"
	if got := lineDiff(a, b); got != want {
		t.Errorf("lineDiff:\n%s\nwant:\n%s", got, want)
	}
	if got := lineDiff(a, a); got != "" {
		t.Errorf("lineDiff of equal texts: %q", got)
	}
}
