// Package pgtest runs a real PostgreSQL server for tests: initdb in a
// temporary directory, postgres on a loopback port with password
// authentication, one fresh database per test.
//
// PostgreSQL's binaries refuse to run as root, so as root the server runs
// as the unprivileged user "nobody" (set on the child process directly, no
// runuser or sudo needed); as any other user it runs as that user.
//
// When the binaries are absent the tests that need them skip with a
// message; with ARBITER_REQUIRE_POSTGRES=1 (set by .ci/run) they fail
// instead, so CI cannot pass with them skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// EnvRequire names the variable that turns a skip into a failure.
const EnvRequire = "ARBITER_REQUIRE_POSTGRES"

// EnvBin names a directory holding initdb and postgres, to override the
// search.
const EnvBin = "ARBITER_POSTGRES_BIN"

// Server is a running test server.
type Server struct {
	dir      string
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
	log      string
	mu       sync.Mutex
	next     int
	bin      string      // the directory of the server's binaries
	cred     *credential // who the server runs as (nil: us)
}

var (
	once    sync.Once
	shared  *Server
	skipMsg string
	failErr error
)

// binDir finds PostgreSQL's server binaries.
func binDir() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		for _, b := range []string{"initdb", "postgres"} {
			if _, err := os.Stat(filepath.Join(d, b)); err != nil {
				return "", fmt.Errorf("PostgreSQL server binaries not found: %s=%s has no %s", EnvBin, d, b)
			}
		}
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	// Debian keeps them out of PATH, one directory per major version.
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found: install Debian's postgresql package or set " + EnvBin)
}

// Start returns the package's shared server, starting it on first use,
// or skips t (fails it under ARBITER_REQUIRE_POSTGRES=1) when PostgreSQL
// is not installed. Call Stop from TestMain after m.Run.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		bin, err := binDir()
		if err != nil {
			skipMsg = err.Error()
			return
		}
		shared, failErr = start(bin)
	})
	if skipMsg != "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 and %s", EnvRequire, skipMsg)
		}
		t.Skip(skipMsg)
	}
	if failErr != nil {
		t.Fatalf("start PostgreSQL: %v", failErr)
	}
	return shared
}

// StartOrWhy is Start for tests that check PostgreSQL in part only: it
// returns the shared server, or nil and why it cannot run (the part is
// skipped). Under ARBITER_REQUIRE_POSTGRES=1 a missing server fails t.
func StartOrWhy(t testing.TB) (*Server, string) {
	t.Helper()
	if _, err := binDir(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 and %v", EnvRequire, err)
		}
		return nil, err.Error()
	}
	return Start(t), ""
}

// Stop stops the shared server if one was started and removes its files.
func Stop() {
	if shared != nil {
		shared.stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(bin string) (*Server, error) {
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir: its parents are private to us, and the server may
	// run as another user, who must be able to reach the directory.
	parent := os.TempDir()
	if fi, err := os.Stat(parent); cred != nil && (err != nil || fi.Mode().Perm()&0o001 == 0) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "arbiter-pg-")
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 12)
	rand.Read(pw)
	s := &Server{dir: dir, password: hex.EncodeToString(pw), exited: make(chan struct{}), log: filepath.Join(dir, "server.log")}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(s.password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		for _, p := range []string{dir, filepath.Join(dir, "pw")} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return fail(err)
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "arbiter", "--pwfile", filepath.Join(dir, "pw"),
		"--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C", "--no-sync")
	initdb.SysProcAttr = childAttr(cred, false)
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	if s.port, err = freePort(); err != nil {
		return fail(err)
	}
	s.bin, s.cred = bin, cred
	if err := s.launch(); err != nil {
		return fail(err)
	}
	return s, nil
}

// launch starts the server process on s's directory and port and waits
// until it accepts connections.
func (s *Server) launch() error {
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// Loopback TCP only (no Unix socket: its default directory belongs to
	// the system's server); fsync off, since a test server's data dies
	// with the test anyway.
	s.exited = make(chan struct{})
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=32MB")
	s.cmd.SysProcAttr = childAttr(s.cred, true)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Dir = s.dir
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("postgres: %w", err)
	}
	cmd, exited := s.cmd, s.exited
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := sql.Open("pgx", s.dsn("postgres"))
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(s.log)
			return fmt.Errorf("postgres exited: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.halt()
			return fmt.Errorf("postgres did not accept connections within 60 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StartOwn starts a server of t's own (not the shared one), stopped and
// removed when t ends: for tests that stop or restart it.
func StartOwn(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 and %v", EnvRequire, err)
		}
		t.Skip(err.Error())
	}
	s, err := start(bin)
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(s.stop)
	return s
}

// Restart stops the server (fast shutdown: every session is ended) and
// starts it again on the same data and port after pause.
func (s *Server) Restart(t testing.TB, pause time.Duration) {
	t.Helper()
	s.halt()
	time.Sleep(pause)
	if err := s.launch(); err != nil {
		t.Fatalf("restart PostgreSQL: %v", err)
	}
}

// halt stops the server process, keeping its files.
func (s *Server) halt() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
}

func (s *Server) stop() {
	s.halt()
	os.RemoveAll(s.dir)
}

// dsn is the URL of database db as the superuser.
func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://arbiter:%s@127.0.0.1:%d/%s?sslmode=disable", s.password, s.port, db)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Password is the superuser's password (user "arbiter").
func (s *Server) Password() string { return s.password }

// NewDatabase creates an empty database for t and returns its URL; the
// database is dropped when t ends.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.next++
	name := fmt.Sprintf("t%d_%s", s.next, strings.ToLower(sanitize(t.Name())))
	s.mu.Unlock()
	if len(name) > 60 {
		name = name[:60]
	}
	admin, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", s.dsn("postgres"))
		if err != nil {
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	})
	return s.dsn(name)
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
