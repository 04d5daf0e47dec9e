//go:build linux

package e2e

// The sandbox through real workers (issue 41): an uploaded engine and a
// source build reach no socket of the worker's host, a thread bomb is
// bounded and its worker lives on, and a worker that is not root builds
// from source and plays. Every case runs on a worker as root (this test
// process's user in CI) and on a worker started as nobody, each with an
// honest control.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/sandbox/sandboxtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// sandboxWorker starts a worker process that takes uploaded engines: as
// this process's user, or (asNobody) as nobody, from a copy of the
// binary that nobody may run, with a directory it owns. It returns the
// process.
func sandboxWorker(t *testing.T, addr, name string, asNobody bool) *proc {
	t.Helper()
	if !asNobody {
		p, _ := startWorkerIn(t, addr, name)
		return p
	}
	dir := sandboxtest.OpenDir(t)
	exe := filepath.Join(dir, "arbiter")
	copyFile(t, bin, exe)
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, sandboxtest.Nobody, sandboxtest.Nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "worker", "--coordinator", addr, "--token", workerToken(t, addr), "--threads", "1", "--hash", "16",
		"--log-level", "info", "--name", name, "--data", filepath.Join(home, "data"), "--allow-uploads")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home)
	cmd.SysProcAttr = sandboxtest.AsNobody()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, lastLines(out.String(), 40))
		}
	})
	return &proc{cmd: cmd, out: &out}
}

// workerKinds are the two workers every case runs on.
func workerKinds(t *testing.T) []bool {
	t.Helper()
	if os.Getuid() != 0 {
		t.Logf("not root: no worker can be started as nobody; the worker runs as uid %d only", os.Getuid())
		return []bool{false}
	}
	return []bool{false, true}
}

func workerName(asNobody bool) string {
	if asNobody {
		return "nobody"
	}
	return "uid" + strconv.Itoa(os.Getuid())
}

// An uploaded engine's bench, and a source tree's build, try the host's
// services: a world-connectable pathname UNIX socket (where PostgreSQL
// listens), an abstract socket, TCP on loopback, a socket pair. On a
// root worker and on a worker as nobody every attempt is refused (EPERM)
// and no listener accepts a connection. The control: the same program,
// run as nobody outside the sandbox, connects to all three.
func TestUploadedEngineCannotConnectToSockets(t *testing.T) {
	requireTools(t)
	services := sandboxtest.Listen(t)
	probe := sandboxtest.Program(t, "sockets", services.Defines()...)
	services.Control(t, probe)

	// The build runs the same program, then fails so that its output
	// comes back with the refusal.
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "sockets.c"), []byte(sandboxtest.Source("sockets")), 0o644)
	defs := strings.ReplaceAll(strings.Join(services.Defines(), " "), `"`, `\"`)
	os.WriteFile(filepath.Join(tree, "Makefile"), []byte("engine:\n\tcc -O1 "+defs+" -o probe sockets.c\n\t./probe\n\t@echo build reached its end; false\n"), 0o644)

	onEachWorker(t, func(t *testing.T, cl sandboxCluster) {
		for _, c := range []struct{ what, engine string }{
			{"uploaded engine", "name=snoop,upload=" + probe + ",bench=7"},
			{"source build", "name=snoop,source=" + tree + ",build=make"},
		} {
			detail := cl.refusal(t, c.engine, "snoop")
			t.Logf("%s on the %s worker:\n%s", c.what, cl.name, lastLines(strings.TrimSpace(detail), 6))
			services.CheckRefused(t, c.what, detail)
		}
	})
}

// An uploaded engine whose bench starts threads without end is stopped
// by the sandbox's bound (256 tasks by default: a pids cgroup on the
// root worker, RLIMIT_NPROC in its user namespace on the worker as
// nobody): pthread_create fails, the bench ends, and the worker reports
// the refusal and lives on. The control on the same worker: an honest
// engine, built from source, plays its games.
func TestUploadedThreadBombIsBounded(t *testing.T) {
	requireTools(t)
	bomb := sandboxtest.Program(t, "threadbomb", "-pthread")
	onEachWorker(t, func(t *testing.T, cl sandboxCluster) {
		detail := cl.refusal(t, "name=bomb,upload="+bomb+",bench=7", "bomb")
		n := sandboxtest.BombThreads(t, detail)
		if n >= 256 {
			t.Fatalf("the bomb started %d threads, the bound is 256 tasks", n)
		}
		t.Logf("%s worker: the bomb stopped after %d threads", cl.name, n)
		if !alive(cl.worker.cmd.Process.Pid) {
			t.Fatalf("the worker died")
		}
		peak := peakRSS(t, cl.worker.cmd.Process.Pid)
		t.Logf("%s worker: peak RSS %d MiB", cl.name, peak>>20)
		if peak > 200<<20 {
			t.Fatalf("the %s worker reached %d MiB resident", cl.name, peak>>20)
		}
		cl.playsFromSource(t, "")
	})
}

// A worker that is not root (the recommended setup) builds an uploaded
// source tree in its sandbox, checks its bench signature and plays.
// Before, its namespaces never started (its uid, mapped onto itself,
// lost its capabilities at the exec) and every build ended with status
// 126. The control is the same test on a root worker.
func TestNonRootWorkerBuildsFromSource(t *testing.T) {
	requireTools(t)
	onEachWorker(t, func(t *testing.T, cl sandboxCluster) {
		j := cl.playsFromSource(t, "11517")
		for _, c := range j.GetArtifactChecks() {
			t.Logf("%s worker: %s %s %s", cl.name, c.GetEngine(), c.GetState(), c.GetDetail())
		}
	})
}

// sandboxCluster is a coordinator, a client credential and one worker
// that takes uploaded engines.
type sandboxCluster struct {
	addr, client string
	name         string // the worker's: "uid0" or "nobody"
	worker       *proc
}

// onEachWorker starts a coordinator and runs f once per kind of worker
// (workerKinds), a subtest each, with that worker alone started.
func onEachWorker(t *testing.T, f func(t *testing.T, cl sandboxCluster)) {
	t.Helper()
	addr := proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	client := newCredential(t, addr, "client")
	for _, asNobody := range workerKinds(t) {
		name := workerName(asNobody)
		t.Run("worker-"+name, func(t *testing.T) {
			w := sandboxWorker(t, addr, name, asNobody)
			f(t, sandboxCluster{addr: addr, client: client, name: name, worker: w})
			w.cmd.Process.Kill()
			w.cmd.Wait()
		})
	}
}

// refusal submits a test of engine (a spec named name) against the
// embedded engine, waits for the worker's refusal, cancels the test and
// returns the refusal's detail and log.
func (cl sandboxCluster) refusal(t *testing.T, engine, name string) string {
	t.Helper()
	id := clientSubmit(t, cl.addr, cl.client, engine, "name=base,builtin")
	j := waitRefused(t, cl.addr, id, name, 1)
	cli(t, "cancel", id, "--coordinator", cl.addr, "--token", cl.client)
	var detail string
	for _, c := range j.GetArtifactChecks() {
		if c.GetEngine() == name {
			detail += c.GetDetail() + "\n" + c.GetLog() + "\n"
		}
	}
	return detail
}

// playsFromSource submits the small C engine as a source tree (with its
// bench signature unless bench is "") and waits until its two games are
// played.
func (cl sandboxCluster) playsFromSource(t *testing.T, bench string) *arbiterv1.Job {
	t.Helper()
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	engine := "name=tiny,source=" + src + ",build=make EXE=engine"
	if bench != "" {
		engine += ",bench=" + bench
	}
	id := clientSubmit(t, cl.addr, cl.client, engine, "name=base,builtin")
	j := waitFor(t, dial(t, cl.addr, token), id, 3*time.Minute, "the source build's test on the "+cl.name+" worker", done)
	if g := j.GetMatchProgress().GetGames(); g != 2 {
		t.Fatalf("the engine built from source on the %s worker: %d games", cl.name, g)
	}
	return j
}

// alive reports whether process pid runs (exists and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return rest != "" && rest[0] != 'Z'
}
