package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// release1 writes the data dir of the first release (a fixture made by that
// release's binary: finished, cancelled and running perft jobs, an SPRT test
// and a match) into a new directory.
func release1(t *testing.T) string {
	t.Helper()
	f, err := os.Open("testdata/release1-coordinator.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return dir
}

func TestUpgradeFromRelease1(t *testing.T) {
	dir := release1(t)
	ctx := context.Background()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion {
		t.Fatalf("version %d after upgrade, want %d", v, SchemaVersion)
	}
	jobs, err := s.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, j := range jobs {
		states[j.Kind+"/"+j.State]++
		if j.Throughput != 1 || j.Submitter != "" {
			t.Errorf("job %s: throughput %v submitter %q after upgrade", j.ID, j.Throughput, j.Submitter)
		}
	}
	want := map[string]int{"perft/done": 2, "perft/cancelled": 1, "perft/running": 1, "sprt/done": 1, "match/done": 1}
	for k, n := range want {
		if states[k] != n {
			t.Errorf("%s: %d jobs, want %d (all: %v)", k, states[k], n, states)
		}
	}
	for _, j := range jobs {
		if j.ID == "pdf32b7395626" && j.Total != "4865609" {
			t.Errorf("perft 5 total %q after upgrade", j.Total)
		}
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 2 {
		t.Fatalf("workers %v %v", ws, err)
	}
	// Registering again is an update, and the new columns work.
	w := ws[0]
	w.Owner = "alice"
	if err := s.PutWorker(ctx, w); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A second open finds it current and changes nothing.
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

func TestRefuseForeignUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES('x')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err = Open(dir)
	if !errors.Is(err, ErrForeign) {
		t.Fatalf("Open of a foreign file: %v, want ErrForeign", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("foreign file changed")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("a WAL file appeared beside the foreign file")
	}
}

func TestRefuseNewerUntouched(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	s.Close()
	path := filepath.Join(dir, FileName)
	before, _ := os.ReadFile(path)
	if _, err := Open(dir); !errors.Is(err, ErrNewer) {
		t.Fatalf("Open of a newer file: %v, want ErrNewer", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("newer file changed")
	}
}

func TestRefuseDamaged(t *testing.T) {
	dir := release1(t)
	path := filepath.Join(dir, FileName)
	b, _ := os.ReadFile(path)
	// Overwrite the middle of the file (table pages) with garbage.
	for i := len(b) / 2; i < len(b)/2+8192; i++ {
		b[i] = 0x5a
	}
	os.WriteFile(path, b, 0o644)
	_, err := Open(dir)
	if err == nil {
		t.Fatal("damaged file opened")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged file: %v, want ErrCorrupt", err)
	}
	t.Log(err)
}

func TestFreshStoreIsCurrent(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var app int
	s.db.QueryRow("PRAGMA application_id").Scan(&app)
	if v, _ := s.Version(context.Background()); v != SchemaVersion || app != ApplicationID {
		t.Fatalf("version %d application_id %#x", v, app)
	}
	if err := s.PutMeta(context.Background(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Meta(context.Background(), "k"); err != nil || string(v) != "v" {
		t.Fatalf("meta %q %v", v, err)
	}
}

// TestPGNsCompressed: games are stored compressed and read back as
// written; games stored plain by the first release still read; the
// retention setting takes only a registered table of jobs with games
// (kinds/test's and kinds/spsa's tests expire their games).
func TestPGNsCompressed(t *testing.T) {
	dir := release1(t)
	ctx := context.Background()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The release-1 SPRT test's games were stored as plain text.
	n := 0
	if err := s.PGNs(ctx, "sc12d9f7a3666", func(p string) error {
		if !strings.HasPrefix(p, "[Event") {
			t.Fatalf("release-1 game reads as %.40q", p)
		}
		n++
		return nil
	}); err != nil || n != 16 {
		t.Fatalf("release-1 games: %d, %v", n, err)
	}
	// A new job's games round-trip through compression.
	now := time.Unix(1_900_000_000, 0)
	j := &Job{ID: "s-new", Kind: "match", State: StateRunning, CreatedAt: now, RootMoves: []string{}}
	if err := s.CreateKindJob(ctx, j, func(context.Context, *sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	game := "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n"
	if err := s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return insertPGNs(ctx, tx, "s-new", 0, []string{game, game})
	}); err != nil {
		t.Fatal(err)
	}
	if g, err := s.PGN(ctx, "s-new", 0, 1); err != nil || g != game {
		t.Fatalf("game read back: %q %v", g, err)
	}
	var stored []byte
	var gz int
	s.db.QueryRow("SELECT pgn, gz FROM pgns WHERE job_id='s-new' AND game=0").Scan(&stored, &gz)
	if gz != 1 || !bytes.HasPrefix(stored, []byte{0x1f, 0x8b}) {
		t.Fatalf("the game is not stored gzip-compressed (gz %d, %.20q)", gz, stored)
	}
	// Retention names a table in its SQL: only a kind's registered one.
	if _, err := s.ExpireGames(ctx, now.Add(time.Second), now.Add(time.Hour), "jobs"); err == nil || !strings.Contains(err.Error(), `"jobs" is no table of jobs with games`) {
		t.Fatalf("expiry over an unregistered table: %v", err)
	}
	if k, _ := s.CountPGNs(ctx, "s-new"); k != 2 {
		t.Fatalf("%d games left after a refused expiry", k)
	}
}

// TestOpenWhileOpen: a store another Store holds open (its schema still in
// the WAL, the main file empty) opens at its version instead of being
// migrated again from 0, which failed on the first step that is not
// idempotent.
func TestOpenWhileOpen(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Open(dir)
	if err != nil {
		t.Fatalf("a second open of a store held open: %v", err)
	}
	defer second.Close()
	if v, err := second.Version(context.Background()); err != nil || v != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion)
	}
}
