package leader

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

func openStore(t *testing.T, dsn string) *store.Store {
	t.Helper()
	st, err := store.OpenPostgres(dsn, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func elector(t *testing.T, st *store.Store, id string, reg prometheus.Registerer) *Elector {
	t.Helper()
	e, err := New(Config{Store: st, ID: id, Timeout: time.Second, Interval: 50 * time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func campaign(t *testing.T, e *Elector, within time.Duration) (int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return e.Campaign(ctx)
}

// One of two coordinators leads; the other takes over when the first
// goes, under a higher term, and its writes pass the fence while the
// first one's no longer do.
func TestOneLeaderThenTakeover(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	stA, stB := openStore(t, dsn), openStore(t, dsn)
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := elector(t, stA, "a", regA)
	termA, err := campaign(t, a, 5*time.Second)
	if err != nil {
		t.Fatalf("a did not lead: %v", err)
	}
	b := elector(t, stB, "b", regB)
	if _, err := campaign(t, b, 500*time.Millisecond); err == nil {
		t.Fatal("b leads while a does")
	}
	if st := b.Status(); st.Role != Follower || st.Leader != "a" || st.Term != termA || st.DBErr != nil {
		t.Fatalf("b's status %+v, want following a at term %d", st, termA)
	}
	if err := stA.PutMeta(context.Background(), "k", []byte("a")); err != nil {
		t.Fatalf("the leader's write: %v", err)
	}
	a.Close()
	select {
	case <-a.Lost():
	case <-time.After(time.Second):
		t.Fatal("a closed but Lost not closed")
	}
	termB, err := campaign(t, b, 5*time.Second)
	if err != nil {
		t.Fatalf("b did not take over: %v", err)
	}
	if termB != termA+1 {
		t.Fatalf("b's term %d, want %d", termB, termA+1)
	}
	if err := stB.PutMeta(context.Background(), "k", []byte("b")); err != nil {
		t.Fatalf("the new leader's write: %v", err)
	}
	if err := stA.PutMeta(context.Background(), "k", []byte("a again")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the former leader's write: %v, want ErrFenced", err)
	}
	if v := testutil.ToFloat64(b.m.leader); v != 1 {
		t.Fatalf("b's leader gauge %v", v)
	}
	if v := testutil.ToFloat64(b.m.changes); v < 1 {
		t.Fatalf("b saw %v leadership changes, want at least 1", v)
	}
	if v := testutil.ToFloat64(a.m.leader); v != 0 {
		t.Fatalf("a's leader gauge %v after losing", v)
	}
}

// A paused leader: its election session is ended by the server (as
// idle_session_timeout does), another takes over, and when the paused
// one wakes up mid-write nothing of it commits.
func TestFencedAfterTakeover(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	stA, stB := openStore(t, dsn), openStore(t, dsn)
	ctx := context.Background()
	// The election by hand, so that "paused" is exact: a raises the
	// term to 1 and is fenced with it.
	db, err := store.PostgresDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "INSERT INTO arbiter_leader(id, term, holder, grpc_addr, http_addr, since) VALUES (1, 1, 'a', '', '', 0)")
	stA.Fence(1)
	if err := stA.PutMeta(ctx, "k", []byte("a")); err != nil {
		t.Fatalf("the leader's write: %v", err)
	}
	// b takes over while a is "paused" between writes.
	mustExec(t, db, "UPDATE arbiter_leader SET term=2, holder='b' WHERE id=1")
	stB.Fence(2)
	if err := stA.PutMeta(ctx, "k", []byte("a after takeover")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the paused leader's write: %v, want ErrFenced", err)
	}
	if err := stB.PutMeta(ctx, "k", []byte("b")); err != nil {
		t.Fatalf("the new leader's write: %v", err)
	}
	got, err := stB.Meta(ctx, "k")
	if err != nil || string(got) != "b" {
		t.Fatalf("meta k = %q, %v; want b", got, err)
	}
	// A takeover waits for a write transaction that passed the check:
	// that write is ordered before the new term, never after.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var term int64
	if err := tx.QueryRow("SELECT term FROM arbiter_leader WHERE id=1 FOR SHARE").Scan(&term); err != nil || term != 2 {
		t.Fatalf("term %d, %v", term, err)
	}
	took := make(chan error, 1)
	go func() {
		_, err := db.Exec("UPDATE arbiter_leader SET term=3, holder='c' WHERE id=1")
		took <- err
	}()
	select {
	case err := <-took:
		t.Fatalf("the takeover overtook a fenced transaction in progress (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-took; err != nil {
		t.Fatal(err)
	}
	if err := stB.PutMeta(ctx, "k", []byte("b after c")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("b's write after c took over: %v, want ErrFenced", err)
	}
}

// The leader's session ended by the server (a database restart, or the
// session timeout of a pause): with nobody leading in between it takes
// the lock again under a new term; when another took over it has lost.
func TestSessionBroken(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	stA := openStore(t, dsn)
	a := elector(t, stA, "a", nil)
	term, err := campaign(t, a, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Advertise(context.Background(), "127.0.0.1:7700", "127.0.0.1:7701"); err != nil {
		t.Fatal(err)
	}
	db, err := store.PostgresDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	terminate := func() {
		t.Helper()
		mustExec(t, db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'arbiter-election a'")
	}
	terminate()
	deadline := time.Now().Add(5 * time.Second)
	for a.Status().Term == term {
		if time.Now().After(deadline) {
			t.Fatalf("a did not take the lock again: %+v", a.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := a.Status(); st.Role != Leading || st.Term != term+1 {
		t.Fatalf("a after its session broke: %+v, want leading at term %d", st, term+1)
	}
	if err := stA.PutMeta(context.Background(), "k", []byte("a")); err != nil {
		t.Fatalf("a's write under its new term: %v", err)
	}
	// It serves where it served: followers still find it.
	var grpcAddr, httpAddr string
	if err := db.QueryRow("SELECT grpc_addr, http_addr FROM arbiter_leader WHERE id=1").Scan(&grpcAddr, &httpAddr); err != nil || grpcAddr != "127.0.0.1:7700" || httpAddr != "127.0.0.1:7701" {
		t.Fatalf("the leader row after a relock names %q and %q (%v), want the addresses a advertised", grpcAddr, httpAddr, err)
	}
	// Now its session breaks and another takes the lock (this test's
	// session, at once: a reconnects only at its next checks) and raises
	// the term: a has lost, and its writes are refused.
	terminate()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SELECT pg_advisory_lock($1, $2)", store.ApplicationID, lockKey); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "UPDATE arbiter_leader SET term=term+1, holder='x' WHERE id=1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Lost():
	case <-time.After(5 * time.Second):
		t.Fatalf("a still thinks it leads: %+v", a.Status())
	}
	if err := stA.PutMeta(context.Background(), "k", []byte("a")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a's write after another took over: %v, want ErrFenced", err)
	}
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
