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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// nobodyUID is the unprivileged user of the non-root workers.
const nobodyUID = 65534

// sandboxTestdata is where the sandbox's test programs live.
const sandboxTestdata = "../../internal/sandbox/testdata"

// openDir is a directory every user may enter and read, removed at the
// end of the test (t.TempDir's are 0700).
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "arbiter-e2e-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

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
	dir := openDir(t)
	exe := filepath.Join(dir, "arbiter")
	copyFile(t, bin, exe)
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "worker", "--coordinator", addr, "--token", workerToken(t, addr), "--threads", "1", "--hash", "16",
		"--log-level", "info", "--name", name, "--data", filepath.Join(home, "data"), "--allow-uploads")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
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

// hostServices are the host's listeners an engine must not reach: a
// pathname UNIX socket any user may connect to (a directory and socket of
// mode 0777, as PostgreSQL's local socket is to its users), an abstract
// one, and TCP on loopback. Each connection accepted is counted.
type hostServices struct {
	path, abstract string
	port           int
	accepted       atomic.Int64
}

func startHostServices(t *testing.T) *hostServices {
	t.Helper()
	dir := openDir(t)
	s := &hostServices{path: filepath.Join(dir, ".s.PGSQL.5432"), abstract: "arbiter-e2e-" + strconv.Itoa(os.Getpid())}
	for _, a := range [][2]string{{"unix", s.path}, {"unix", "@" + s.abstract}, {"tcp", "127.0.0.1:0"}} {
		ln, err := net.Listen(a[0], a[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
			s.port = tcp.Port
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				s.accepted.Add(1)
				c.Close()
			}
		}()
	}
	for _, p := range []string{dir, s.path} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// defines point the sandbox's sockets.c at s.
func (s *hostServices) defines() []string {
	return []string{`-DSOCKET_PATH="` + s.path + `"`, `-DABSTRACT_NAME="` + s.abstract + `"`, "-DTCP_PORT=" + strconv.Itoa(s.port)}
}

// socketLines are the four attempts sockets.c reports.
var socketLines = []string{"unix-path", "unix-abstract", "tcp", "socketpair"}

// checkRefused fails unless every attempt in log was refused with EPERM
// (seccomp refuses the socket itself).
func checkRefused(t *testing.T, what, log string) {
	t.Helper()
	for _, k := range socketLines {
		if !regexp.MustCompile(`(?m)^` + k + `: (socket: )?Operation not permitted$`).MatchString(log) {
			t.Errorf("%s: %s not refused with EPERM:\n%s", what, k, lastLines(log, 12))
		}
	}
	if strings.Contains(log, "CONNECTED") {
		t.Errorf("%s connected:\n%s", what, lastLines(log, 12))
	}
}

// An uploaded engine's bench, and a source tree's build, try the host's
// services: a world-connectable pathname UNIX socket (where PostgreSQL
// listens), an abstract socket, TCP on loopback, a socket pair. On a
// root worker and on a worker as nobody every attempt is refused (EPERM)
// and no listener accepts a connection. The control: the same program,
// run as nobody outside the sandbox, connects to all three.
func TestUploadedEngineCannotConnectToSockets(t *testing.T) {
	requireTools(t)
	services := startHostServices(t)
	src, err := filepath.Abs(filepath.Join(sandboxTestdata, "sockets.c"))
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(openDir(t), "sockets")
	if out, err := exec.Command("cc", append([]string{"-O1", "-o", probe, src}, services.defines()...)...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	control := exec.Command(probe)
	if os.Getuid() == 0 {
		control.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	}
	if out, err := control.CombinedOutput(); err != nil || strings.Count(string(out), "CONNECTED") != 4 || services.accepted.Load() != 3 {
		t.Fatalf("control: outside the sandbox the program does not reach the host's sockets (%v, %d accepted):\n%s", err, services.accepted.Load(), out)
	}
	services.accepted.Store(0)

	// The build runs the same program, then fails so that its output
	// comes back with the refusal.
	tree := t.TempDir()
	copyFile(t, src, filepath.Join(tree, "sockets.c"))
	defs := strings.ReplaceAll(strings.Join(services.defines(), " "), `"`, `\"`)
	os.WriteFile(filepath.Join(tree, "Makefile"), []byte("engine:\n\tcc -O1 "+defs+" -o probe sockets.c\n\t./probe\n\t@echo build reached its end; false\n"), 0o644)

	onEachWorker(t, func(t *testing.T, cl sandboxCluster) {
		for _, c := range []struct{ what, engine string }{
			{"uploaded engine", "name=snoop,upload=" + probe + ",bench=7"},
			{"source build", "name=snoop,source=" + tree + ",build=make"},
		} {
			detail := cl.refusal(t, c.engine, "snoop")
			t.Logf("%s on the %s worker:\n%s", c.what, cl.name, lastLines(strings.TrimSpace(detail), 6))
			checkRefused(t, c.what, detail)
			if n := services.accepted.Load(); n != 0 {
				t.Fatalf("%s: the host's services accepted %d connections", c.what, n)
			}
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
	src, err := filepath.Abs(filepath.Join(sandboxTestdata, "threadbomb.c"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	bomb := cEngine(t, "threadbomb", string(b), "-pthread")
	onEachWorker(t, func(t *testing.T, cl sandboxCluster) {
		detail := cl.refusal(t, "name=bomb,upload="+bomb+",bench=7", "bomb")
		m := regexp.MustCompile(`bomb: stopped after (\d+) threads: Resource temporarily unavailable`).FindStringSubmatch(detail)
		if m == nil {
			t.Fatalf("the bomb was not stopped by a refused thread:\n%s", lastLines(detail, 8))
		}
		if n, _ := strconv.Atoi(m[1]); n >= 256 {
			t.Fatalf("the bomb started %d threads, the bound is 256 tasks", n)
		}
		t.Logf("%s worker: %s", cl.name, m[0])
		if !alive(cl.worker.cmd.Process.Pid) {
			t.Fatalf("the worker died")
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
	addr := freeAddr(t)
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
