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

// checkDetail returns the detail and log of the refusal of engine in
// test id, once every one of workers reported it.
func checkDetail(t *testing.T, addr, id, engine string) string {
	t.Helper()
	j := waitRefused(t, addr, id, engine, 1)
	var detail string
	for _, c := range j.GetArtifactChecks() {
		if c.GetEngine() == engine {
			detail += c.GetDetail() + "\n" + c.GetLog() + "\n"
		}
	}
	return detail
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

	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	for _, asNobody := range workerKinds(t) {
		name := workerName(asNobody)
		t.Run("worker-"+name, func(t *testing.T) {
			w := sandboxWorker(t, addr, name, asNobody)
			for _, c := range []struct{ what, engine string }{
				{"uploaded engine", "name=snoop,upload=" + probe + ",bench=7"},
				{"source build", "name=snoop,source=" + tree + ",build=make"},
			} {
				id := clientSubmit(t, addr, client, c.engine, "name=base,builtin")
				detail := checkDetail(t, addr, id, "snoop")
				cli(t, "cancel", id, "--coordinator", addr, "--token", client)
				t.Logf("%s on the %s worker:\n%s", c.what, name, lastLines(strings.TrimSpace(detail), 6))
				checkRefused(t, c.what, detail)
				if n := services.accepted.Load(); n != 0 {
					t.Fatalf("%s: the host's services accepted %d connections", c.what, n)
				}
			}
			w.cmd.Process.Kill()
			w.cmd.Wait()
		})
	}
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
	honest, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	for _, asNobody := range workerKinds(t) {
		name := workerName(asNobody)
		t.Run("worker-"+name, func(t *testing.T) {
			w := sandboxWorker(t, addr, name, asNobody)
			id := clientSubmit(t, addr, client, "name=bomb,upload="+bomb+",bench=7", "name=base,builtin")
			detail := checkDetail(t, addr, id, "bomb")
			cli(t, "cancel", id, "--coordinator", addr, "--token", client)
			m := regexp.MustCompile(`bomb: stopped after (\d+) threads: Resource temporarily unavailable`).FindStringSubmatch(detail)
			if m == nil {
				t.Fatalf("the bomb was not stopped by a refused thread:\n%s", lastLines(detail, 8))
			}
			if n, _ := strconv.Atoi(m[1]); n >= 256 {
				t.Fatalf("the bomb started %d threads, the bound is 256 tasks", n)
			}
			t.Logf("%s worker: %s", name, m[0])
			if !alive(w.cmd.Process.Pid) {
				t.Fatalf("the worker died")
			}
			id = clientSubmit(t, addr, client, "name=tiny,source="+honest+",build=make EXE=engine", "name=base,builtin")
			j := waitFor(t, dial(t, addr, token), id, 3*time.Minute, "the honest engine's test on the "+name+" worker", done)
			if g := j.GetMatchProgress().GetGames(); g != 2 {
				t.Fatalf("honest engine: %d games", g)
			}
			w.cmd.Process.Kill()
			w.cmd.Wait()
		})
	}
}

// A worker that is not root (the recommended setup) builds an uploaded
// source tree in its sandbox, checks its bench signature and plays.
// Before, its namespaces never started (its uid, mapped onto itself,
// lost its capabilities at the exec) and every build ended with status
// 126. The control is the same test on a root worker.
func TestNonRootWorkerBuildsFromSource(t *testing.T) {
	requireTools(t)
	honest, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	for _, asNobody := range workerKinds(t) {
		name := workerName(asNobody)
		t.Run("worker-"+name, func(t *testing.T) {
			w := sandboxWorker(t, addr, name, asNobody)
			id := clientSubmit(t, addr, client, "name=tiny,source="+honest+",build=make EXE=engine,bench=11517", "name=base,builtin")
			j := waitFor(t, dial(t, addr, token), id, 3*time.Minute, "the source build's test on the "+name+" worker", done)
			if g := j.GetMatchProgress().GetGames(); g != 2 {
				t.Fatalf("%d games", g)
			}
			for _, c := range j.GetArtifactChecks() {
				t.Logf("%s worker: %s %s %s", name, c.GetEngine(), c.GetState(), c.GetDetail())
			}
			w.cmd.Process.Kill()
			w.cmd.Wait()
		})
	}
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
