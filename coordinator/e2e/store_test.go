//go:build unix

package e2e

// The store: a data dir written by the first release opens and upgrades
// (the real binary), foreign and damaged files are refused untouched by
// `arbiter coordinator`, a poisoned stored test is quarantined while
// everything else resumes, and a backup taken online restores.

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// release1Data copies the first release's data dir fixture into a new dir.
func release1Data(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../store/testdata/release1-coordinator.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "coordinator.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return dir
}

// moveToHarnessStore moves the SQLite store of data to the harness's
// store when that is PostgreSQL (arbiter store copy, then the file goes),
// and returns its URL ("" on SQLite: nothing to move).
func moveToHarnessStore(t *testing.T, data string) string {
	t.Helper()
	dsn := storeURL(t, data)
	if dsn == "" {
		return ""
	}
	if out, code := cli(t, "store", "copy", "--from", data, "--to", dsn); code != 0 {
		t.Fatalf("store copy: exit %d: %s", code, out)
	}
	if err := os.Remove(filepath.Join(data, "coordinator.db")); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// TestRelease1DataUpgrades: the coordinator opens the first release's data
// dir, upgrades it, shows every job as that release did, and finishes the
// perft job that was running when it was killed.
func TestRelease1DataUpgrades(t *testing.T) {
	data := release1Data(t)
	moveToHarnessStore(t, data) // on PostgreSQL: upgraded, then copied
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, data)
	conn := dial(t, addr, token)
	want := map[string]struct{ state, nodes string }{
		"pdf32b7395626": {"JOB_STATE_DONE", "4865609"},
		"p01ef1ed5c139": {"JOB_STATE_DONE", "4085603"},
		"p149e56e51cf7": {"JOB_STATE_CANCELLED", ""},
		"sc12d9f7a3666": {"JOB_STATE_DONE", ""},
		"s2f680a6e3c88": {"JOB_STATE_DONE", ""},
		"pced7f5473e8a": {"JOB_STATE_RUNNING", ""},
	}
	for id, w := range want {
		j := getJob(t, conn, id)
		if j.GetState().String() != w.state || (w.nodes != "" && j.GetNodes() != w.nodes) {
			t.Errorf("job %s: %v %q, want %s %q", id, j.GetState(), j.GetNodes(), w.state, w.nodes)
		}
	}
	// The first release's SPRT test keeps its games and verdict.
	s := getJob(t, conn, "sc12d9f7a3666").GetMatchProgress()
	if s.GetGames() != 16 || s.GetPgns() != 16 {
		t.Errorf("release-1 SPRT test: %d games, %d PGNs, want 16", s.GetGames(), s.GetPgns())
	}
	// The verified perft job keeps its verified units (48 of 48).
	if p := getJob(t, conn, "p01ef1ed5c139").GetProgress(); p.GetUnitsVerified() != 48 {
		t.Errorf("release-1 verified job: %d units verified, want 48", p.GetUnitsVerified())
	}
	// The perft 8 job killed mid-run resumes and finishes exactly.
	startWorker(t, addr, "--threads", "2", "--hash", "64")
	final := waitFor(t, conn, "pced7f5473e8a", 10*time.Minute, "release-1 perft 8 done", done)
	if final.GetNodes() != "84998978956" {
		t.Fatalf("perft 8 = %s, want 84998978956", final.GetNodes())
	}
}

// TestForeignAndDamagedRefused: the coordinator refuses a foreign SQLite
// file and a damaged one with a clear error and leaves them as they were.
func TestForeignAndDamagedRefused(t *testing.T) {
	onSQLiteOnly(t)
	foreign := t.TempDir()
	path := filepath.Join(foreign, "coordinator.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE invoices(id INTEGER PRIMARY KEY, amount REAL); INSERT INTO invoices(amount) VALUES(9.5)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	damaged := release1Data(t)
	dpath := filepath.Join(damaged, "coordinator.db")
	b, _ := os.ReadFile(dpath)
	for i := len(b) / 2; i < len(b)/2+8192; i++ {
		b[i] = 0x5a
	}
	os.WriteFile(dpath, b, 0o644)

	for _, c := range []struct{ dir, file, want string }{
		{foreign, path, "not an Arbiter coordinator database"},
		{damaged, dpath, "database is damaged"},
	} {
		before, _ := os.ReadFile(c.file)
		out, err := exec.Command(bin, "coordinator", "--listen", proctest.FreeAddr(t), "--data", c.dir, "--token", token).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), c.want) {
			t.Errorf("coordinator on %s: %v\n%s", c.dir, err, out)
		}
		after, _ := os.ReadFile(c.file)
		if !bytes.Equal(before, after) {
			t.Errorf("%s changed", c.file)
		}
		if _, err := os.Stat(c.file + "-wal"); err == nil {
			t.Errorf("%s: a WAL appeared", c.file)
		}
	}
}

// TestPoisonedTestQuarantined: one stored test that cannot load (its spec
// bytes damaged) is quarantined and reported; every other job resumes.
func TestPoisonedTestQuarantined(t *testing.T) {
	data := release1Data(t)
	var db *sql.DB
	var err error
	dsn := moveToHarnessStore(t, data)
	if dsn != "" {
		db, err = store.PostgresDB(dsn)
	} else {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(data, "coordinator.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE tests SET spec=? WHERE job_id='s2f680a6e3c88'", []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	logCore, logs := observer.New(zap.InfoLevel)
	cl, err := localcluster.Start(localcluster.Config{HashMB: 1, Server: localcluster.ServerConfig{Data: data, Store: dsn, Token: token,
		UnitDuration: 100 * time.Millisecond, Logger: zap.New(logCore)}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	conn := dial(t, cl.Addr(), token)
	if j := getJob(t, conn, "pdf32b7395626"); j.GetNodes() != "4865609" {
		t.Fatalf("another job after the quarantine: %v", j)
	}
	if s := getJob(t, conn, "sc12d9f7a3666").GetMatchProgress(); s.GetGames() != 16 {
		t.Fatalf("the other test after the quarantine: %d games", s.GetGames())
	}
	_, err = arbiterv1.NewJobServiceClient(conn).GetJob(ctxT(t, 5*time.Second), &arbiterv1.GetJobRequest{JobId: "s2f680a6e3c88"})
	if err == nil {
		t.Fatal("the poisoned test is served")
	}
	if n := cl.Coordinator().Quarantined(); n != 1 {
		t.Fatalf("%d records quarantined, want 1", n)
	}
	reported := logs.FilterMessageSnippet("quarantined").FilterField(zap.String("id", "s2f680a6e3c88")).Len()
	if reported != 1 {
		t.Fatalf("the quarantine of s2f680a6e3c88 logged %d times, want once; log:\n%v", reported, logs.All())
	}
	db, err = openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.QueryRow("SELECT COUNT(*) FROM quarantine WHERE id='s2f680a6e3c88'").Scan(&n)
	if n != 1 {
		t.Fatalf("quarantine rows for the poisoned test: %d", n)
	}
}

// TestBackupRestores: a backup taken while the coordinator serves opens as
// a data dir with the same jobs.
func TestBackupRestores(t *testing.T) {
	onSQLiteOnly(t)
	addr := localCluster(t, release1Data(t), 0).Addr()
	file := filepath.Join(t.TempDir(), "backup.db")
	out, code := cli(t, "backup", "--coordinator", addr, "--token", token, "--to", file)
	if code != 0 {
		t.Fatalf("backup: exit %d: %s", code, out)
	}
	restored := t.TempDir()
	if err := os.Rename(file, filepath.Join(restored, "coordinator.db")); err != nil {
		t.Fatal(err)
	}
	addr2 := localCluster(t, restored, 0).Addr()
	if j := getJob(t, dial(t, addr2, token), "p01ef1ed5c139"); j.GetNodes() != "4085603" {
		t.Fatalf("restored job: %v", j)
	}
	// A client credential may not take backups.
	out, code = cli(t, "backup", "--coordinator", addr, "--token", newCredential(t, addr, "client"), "--to", filepath.Join(t.TempDir(), "x.db"))
	if code != 3 || !strings.Contains(out, "admin") {
		t.Fatalf("backup with a client credential: exit %d: %s", code, out)
	}
}
