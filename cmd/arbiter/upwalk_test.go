package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
)

// The README's walk as a newcomer takes it (issue 32), with real
// processes: `make demo` (up --depth N --keep-serving) prints its result
// and keeps serving its pages until stopped; it listens on 7700 when that
// port is free and keeps its data in the user's data directory, saying
// where; clients on the machine find it with no flag (its connection
// file); a second up does not share the store; stopped, it removes the
// connection file and keeps the data, which the next up serves again.
func TestUpNewcomerWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs arbiter up")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	t.Setenv(clicmd.EnvCoordinator, "")
	t.Setenv(auth.EnvToken, "")
	env := []string{"XDG_DATA_HOME=" + xdg, clicmd.EnvCoordinator + "="}
	data := filepath.Join(xdg, "arbiter", "up")
	connFile := filepath.Join(data, clicmd.ConnFileName)
	portFree := true
	if l, err := net.Listen("tcp", clicmd.DefaultCoordinator); err != nil {
		portFree = false
	} else {
		l.Close()
	}

	demo := startArbiterProcess(t, env, "up", "--workers", "1", "--threads", "1", "--hash", "1", "--depth", "3", "--keep-serving")
	addr := demo.waitLine(t, "arbiter coordinator: listening on ")
	if portFree && addr != clicmd.DefaultCoordinator {
		t.Errorf("up listens on %s with %s free", addr, clicmd.DefaultCoordinator)
	}
	where := demo.waitLine(t, "arbiter up: coordinator on ")
	if !strings.Contains(where, "(data "+data+": kept; --temp for a temporary one)") {
		t.Errorf("up does not say where its data is kept: %s", where)
	}
	pages := demo.waitLine(t, "arbiter up: pages on ")
	if found := demo.waitLine(t, "arbiter up: clients on this machine find it through "); !strings.HasPrefix(found, connFile) {
		t.Errorf("connection file: %s, want %s", found, connFile)
	}
	demo.waitLine(t, "arbiter up: serving on until Ctrl-C")
	// The pages stay up after the job: a person can click the link.
	time.Sleep(200 * time.Millisecond)
	resp, err := http.Get(strings.Fields(pages)[0])
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("pages after the demo's job: %v %v", err, resp)
	}
	resp.Body.Close()
	if fi, err := os.Stat(connFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("connection file: %v %v, want mode 0600", fi, err)
	}

	// A client with no flag finds it (address and token).
	out, stderr, err := runArbiter(t, "", "status")
	if err != nil || !strings.Contains(out, "done") || !strings.Contains(out, "PERFT") {
		t.Fatalf("status without flags: %v\n%s%s", err, out, stderr)
	}
	// A cluster SPRT with no flag either, and its page to open.
	out, stderr, err = runArbiter(t, "", "submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=50", "--games", "2", "--batch-pairs", "1", "--wait")
	i := strings.Index(stderr, ": page http://")
	if err != nil || i < 0 {
		t.Fatalf("submit sprt without flags: %v\n%s%s", err, out, stderr)
	}
	page := strings.Fields(stderr[i+len(": page "):])[0]
	if !strings.HasPrefix(page, strings.Fields(pages)[0]+"tests/") {
		t.Errorf("test page %s is not under %s", page, pages)
	}
	if resp, err := http.Get(page); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("test page %s: %v %v", page, err, resp)
	} else {
		resp.Body.Close()
	}
	// $ARBITER_COORDINATOR names another coordinator (none there).
	t.Setenv(clicmd.EnvCoordinator, "127.0.0.1:1")
	_, _, err = runArbiter(t, "", "status", "--token", "x")
	if cliexit.Code(err, 0) != 3 || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("status with %s=127.0.0.1:1: %v", clicmd.EnvCoordinator, err)
	}
	t.Setenv(clicmd.EnvCoordinator, "")

	// A second up on the same machine: another port, its own temporary
	// store.
	out, stderr, err = runArbiter(t, "", "up", "--workers", "1", "--threads", "1", "--hash", "1", "--depth", "1", "--http", "")
	if err != nil || !strings.Contains(stderr, data+" is in use by arbiter up") || !strings.Contains(stderr, "temporary, removed on exit") ||
		!strings.Contains(stderr, "export "+clicmd.EnvCoordinator+"=") {
		t.Errorf("second up: %v\n%s%s", err, out, stderr)
	}

	// Stopped: the connection file goes, the data stays and the next up
	// serves it.
	demo.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-demo.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop on SIGINT")
	}
	if _, err := os.Stat(connFile); !os.IsNotExist(err) {
		t.Errorf("connection file after exit: %v", err)
	}
	again := startArbiterProcess(t, env, "up", "--workers", "0")
	again.waitLine(t, "arbiter up: serving;")
	out, stderr, err = runArbiter(t, "", "status")
	if err != nil || !strings.Contains(out, "done") {
		t.Errorf("status after a restart on the kept data: %v\n%s%s", err, out, stderr)
	}
}

// --temp and --data do not mix; --data "" is refused.
func TestUpDataFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "--temp", "--data", t.TempDir()}, "--temp and --data"},
		{[]string{"up", "--data", ""}, "--data: empty"},
	} {
		_, _, err := runArbiter(t, "", c.args...)
		if cliexit.Code(err, 0) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want status 2 with %q", c.args, err, c.want)
		}
	}
}
