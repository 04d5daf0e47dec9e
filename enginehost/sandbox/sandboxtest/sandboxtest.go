//go:build linux

// Package sandboxtest holds what the sandbox's tests and the end-to-end
// tests of workers share to attack a sandboxed engine from both sides:
// programs that try the host's sockets and start threads without end,
// the host's services they aim at, and directories and a user for a
// worker that is not root.
package sandboxtest

import (
	_ "embed"
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

// Nobody is the unprivileged user (uid and gid) of the non-root workers.
const Nobody = 65534

// AsNobody starts a process as Nobody (the caller must be root).
func AsNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
}

// OpenDir is a directory every user may enter and read, removed at the
// end of the test (os.MkdirTemp and t.TempDir make theirs 0700, which a
// worker as Nobody cannot enter).
func OpenDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "arbiter-sandbox-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	//go:embed programs/sockets.c
	socketsSource string
	//go:embed programs/threadbomb.c
	threadBombSource string
)

// Programs are the attack programs by name: "sockets" (compile it with
// Services.Defines) and "threadbomb".
var programs = map[string]string{"sockets": socketsSource, "threadbomb": threadBombSource}

// Program compiles the program name into an OpenDir, where any user may
// run it, with the C compiler's extra flags; it skips the test without a
// compiler.
func Program(t *testing.T, name string, flags ...string) string {
	t.Helper()
	src, ok := programs[name]
	if !ok {
		t.Fatalf("sandboxtest: no program %q", name)
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := OpenDir(t)
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	if out, err := exec.Command(cc, append([]string{"-O1", "-o", exe, c}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v: %s", name, err, out)
	}
	return exe
}

// Source is the C source of the program name (for a source tree).
func Source(name string) string { return programs[name] }

// Services are the host's listeners a sandboxed engine must not reach: a
// pathname UNIX socket any user may connect to (its directory and the
// socket of mode 0777, as PostgreSQL's local socket is to its users), an
// abstract one, and TCP on loopback. Accepted counts the connections.
type Services struct {
	Path, Abstract string
	Port           int
	Accepted       atomic.Int64
}

// Listen starts the Services until the end of the test.
func Listen(t *testing.T) *Services {
	t.Helper()
	dir := OpenDir(t)
	s := &Services{Path: filepath.Join(dir, ".s.PGSQL.5432"), Abstract: "arbiter-sandboxtest-" + strconv.Itoa(os.Getpid())}
	for _, a := range [][2]string{{"unix", s.Path}, {"unix", "@" + s.Abstract}, {"tcp", "127.0.0.1:0"}} {
		ln, err := net.Listen(a[0], a[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
			s.Port = tcp.Port
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				s.Accepted.Add(1)
				c.Close()
			}
		}()
	}
	for _, p := range []string{dir, s.Path} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Defines point the sockets program at s.
func (s *Services) Defines() []string {
	return []string{`-DSOCKET_PATH="` + s.Path + `"`, `-DABSTRACT_NAME="` + s.Abstract + `"`, "-DTCP_PORT=" + strconv.Itoa(s.Port)}
}

// Control runs the sockets program exe outside the sandbox, as Nobody
// when this process is root, and fails the test unless it reaches all
// three listeners and makes its socket pair: what the sandboxed runs
// must not do is possible here. It resets Accepted.
func (s *Services) Control(t *testing.T, exe string) {
	t.Helper()
	cmd := exec.Command(exe)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = AsNobody()
	}
	out, err := cmd.CombinedOutput()
	// A connect returns once the kernel queues the connection; the
	// listener's goroutine counts it when it is scheduled, which may be
	// after the program has exited.
	for deadline := time.Now().Add(10 * time.Second); s.Accepted.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || strings.Count(string(out), "CONNECTED") != len(attempts) || s.Accepted.Load() != 3 {
		t.Fatalf("control: outside the sandbox the program does not reach the host's sockets (%v, %d accepted):\n%s", err, s.Accepted.Load(), out)
	}
	s.Accepted.Store(0)
}

// attempts are the lines the sockets program prints.
var attempts = []string{"unix-path", "unix-abstract", "tcp", "socketpair"}

// CheckRefused fails the test unless the output of the sockets program
// (what names the run) shows every attempt refused with EPERM (seccomp
// refuses the socket itself) and no listener accepted a connection.
func (s *Services) CheckRefused(t *testing.T, what, out string) {
	t.Helper()
	for _, k := range attempts {
		if !regexp.MustCompile(`(?m)^` + k + `: (socket: )?Operation not permitted$`).MatchString(out) {
			t.Errorf("%s: %s not refused with EPERM:\n%s", what, k, out)
		}
	}
	if n := s.Accepted.Load(); n != 0 || strings.Contains(out, "CONNECTED") {
		t.Fatalf("%s connected (%d accepted):\n%s", what, n, out)
	}
}

// BombThreads reads how many threads the thread bomb started before a
// thread was refused (EAGAIN); it fails the test if none was.
func BombThreads(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`bomb: stopped after (\d+) threads: Resource temporarily unavailable`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the bomb was not stopped by a refused thread:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
