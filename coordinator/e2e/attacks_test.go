//go:build linux

package e2e

// Attacks on workers by the holder of one client credential (issue 28):
// a shell as an installed engine, an option that writes a file, an
// uploaded engine that looks for the worker's token, prints without end,
// hoards memory in memfds or fills its directory. Each is refused or
// contained by real worker processes, and an honest control next to it
// succeeds.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// clientSubmit submits a match with a client credential (no --wait) and
// returns the test id.
func clientSubmit(t *testing.T, addr, tok string, engineA, engineB string, extra ...string) string {
	t.Helper()
	args := []string{"submit", "match", "--coordinator", addr, "--token", tok, "--engine", engineA, "--engine", engineB,
		"--each", "nodes=500", "--openings", "file=" + book + ",order=random,seed=5", "--games", "2"}
	out, code := cli(t, append(args, extra...)...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, out)
	}
	return jobID(out)
}

// waitExcluded waits until a worker of test id is excluded with a reason
// holding want, and returns that reason.
func waitExcluded(t *testing.T, addr, id, want string) string {
	t.Helper()
	var reason string
	waitFor(t, dial(t, addr, token), id, 2*time.Minute, "a refusal naming "+want, func(j *arbiterv1.Job) bool {
		for _, w := range j.GetMatchProgress().GetWorkers() {
			if w.GetExcluded() && strings.Contains(w.GetReason(), want) {
				reason = w.GetReason()
				return true
			}
		}
		return false
	})
	return reason
}

// refusedByWorker submits a test of engine against the embedded one, waits
// until a worker is excluded from it with a reason holding want, checks
// that no game counted, and cancels it.
func refusedByWorker(t *testing.T, addr, client, name, engine, want string) {
	t.Helper()
	id := clientSubmit(t, addr, client, engine, "name=base,builtin")
	reason := waitExcluded(t, addr, id, want)
	t.Logf("%s: refused: %s", name, reason)
	if g := getJob(t, dial(t, addr, token), id).GetMatchProgress().GetGames(); g != 0 {
		t.Errorf("%s: %d games counted", name, g)
	}
	cli(t, "cancel", id, "--coordinator", addr, "--token", client)
}

// processesWith lists the processes whose command line holds s.
func processesWith(s string) []string {
	return processes("cmdline", func(pid, cmdline string) string {
		if strings.Contains(cmdline, s) {
			return pid + ": " + strings.ReplaceAll(cmdline, "\x00", " ")
		}
		return ""
	})
}

// processes lists what match says of each process (skipping ""), given
// its pid and its /proc/PID/file.
func processes(file string, match func(pid, content string) string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/" + file)
		if err != nil {
			continue
		}
		if m := match(e.Name(), string(b)); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// A client names a shell as its engine, with a script that would read the
// worker's token and leave a process behind: the worker runs nothing (it
// allows Stockfish only) and says why; a test of the allowed engine by
// its name plays. Arguments of the client's choosing and an option that
// writes a file are refused the same way.
func TestClientCannotRunItsOwnCommandOnWorkers(t *testing.T) {
	addr, client, _ := stockfishWorker(t, "--name", "w1")

	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	log := filepath.Join(dir, "debug.log")
	script := fmt.Sprintf("cat /proc/$PPID/cmdline > %s; (sleep 300; echo arbiter-e2e-orphan) & echo uciok", marker)
	cases := []struct {
		name, engine, want string
	}{
		{"shell", `name=evil,cmd=/bin/sh,args="-c ` + strings.ReplaceAll(script, `"`, `""`) + `"`, `engine command "/bin/sh" is not allowed on this worker`},
		{"arguments", `name=evil,cmd=stockfish,args=--evil`, "the worker's operator sets them"},
		{"file option", "name=evil,cmd=stockfish,option.Debug Log File=" + log, `option "Debug Log File"`},
	}
	for _, tc := range cases {
		refusedByWorker(t, addr, client, tc.name, tc.engine, tc.want)
	}
	for _, f := range []string{marker, log} {
		if _, err := os.Stat(f); err == nil {
			b, _ := os.ReadFile(f)
			t.Fatalf("the client's engine ran on the worker: %s holds %q", f, b)
		}
	}
	if ps := processesWith("arbiter-e2e-orphan"); len(ps) > 0 {
		t.Fatalf("processes left behind: %v", ps)
	}

	// The control: the allowed engine by its name, as the client names it.
	id := clientSubmit(t, addr, client, "name=sf,cmd=stockfish,option.Hash=8", "name=base,builtin")
	j := waitFor(t, dial(t, addr, token), id, 2*time.Minute, "the allowed engine's test", done)
	if g := j.GetMatchProgress().GetGames(); g != 2 {
		t.Fatalf("allowed engine: %d games", g)
	}
}

// stockfishWorker starts a coordinator and a worker that allows the
// installed Stockfish as "stockfish" (the test is skipped without it),
// with the worker's extra flags; it returns the coordinator's address and
// a client credential.
func stockfishWorker(t *testing.T, extra ...string) (addr, client string, worker *proc) {
	t.Helper()
	const sf = "/usr/games/stockfish"
	if _, err := os.Stat(sf); err != nil {
		t.Skip("no " + sf)
	}
	addr = proctest.FreeAddr(t)
	coordinator(t, addr, t.TempDir())
	client = newCredential(t, addr, "client")
	worker = startWorker(t, addr, append([]string{"--engine-allow", "name=stockfish,cmd=" + sf}, extra...)...)
	return addr, client, worker
}

// cEngine compiles a C program for upload.
func cEngine(t *testing.T, name, src string, defines ...string) string {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	args := append(append([]string{"-O1", "-o", exe}, defines...), c)
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v: %s", name, err, out)
	}
	return exe
}

// snoop is an uploaded engine whose bench looks for the worker's token:
// in the token file, and in the command line and environment of every
// process it can see. It prints what it found (the bench's log reaches
// the coordinator with the refusal: a channel out) and a node count that
// matches no signature.
const snoop = `#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static int refused, seen;
static void try(const char *path) {
	char buf[8192];
	int fd = open(path, O_RDONLY);
	if (fd < 0) { refused++; return; }
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) return;
	seen++;
	for (ssize_t i = 0; i < n; i++) if (buf[i] == 0) buf[i] = ' ';
	buf[n] = 0;
	char *p = strstr(buf, "arb_");
	if (p) printf("LEAK %s: %.48s\n", path, p);
}
int main(void) {
	try(TOKEN_FILE);
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300];
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name); try(path);
		snprintf(path, sizeof path, "/proc/%s/environ", e->d_name); try(path);
	}
	printf("snoop: %d opens refused, %d read\n", refused, seen);
	printf("Nodes searched  : 1\n");
	return 0;
}
`

// An uploaded engine cannot read the worker's token: not its file, not
// /proc/WORKER/cmdline (the token is on it here) or environ
// ($ARBITER_TOKEN). The control is the same engine on a worker run with
// --unsandboxed: it finds the token, so the test can see a leak.
func TestUploadedEngineCannotReadTheWorkersToken(t *testing.T) {
	requireTools(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	tokens := map[string]string{}
	for _, name := range []string{"sandboxed", "unsandboxed"} {
		dir := t.TempDir()
		tok := workerToken(t, addr)
		tokens[name] = tok
		tokFile := filepath.Join(dir, "worker.token")
		os.WriteFile(tokFile, []byte(tok+"\n"), 0o600)
		exe := cEngine(t, "snoop-"+name, snoop, `-DTOKEN_FILE="`+tokFile+`"`)
		extra := []string{}
		if name == "unsandboxed" {
			extra = append(extra, "--unsandboxed")
		}
		// The token on the command line and in the environment as well.
		args := append([]string{"worker", "--coordinator", addr, "--token", tok, "--threads", "1", "--hash", "16", "--log-level", "info",
			"--name", name, "--data", filepath.Join(dir, "data"), "--allow-uploads"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "ARBITER_TOKEN="+tok)
		cmd.Dir = dir
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		id := clientSubmit(t, addr, client, "name=snoop,upload="+exe+",bench=7", "name=base,builtin")
		j := waitRefused(t, addr, id, "snoop", 1)
		var log string
		for _, c := range j.GetArtifactChecks() {
			if c.GetEngine() == "snoop" && c.GetLog() != "" {
				log = c.GetLog()
			}
		}
		cli(t, "cancel", id, "--coordinator", addr, "--token", client)
		t.Logf("%s worker, the engine's bench said:\n%s", name, log)
		if !strings.Contains(log, "snoop:") {
			t.Fatalf("%s: the snoop did not run: %q", name, log)
		}
		leaked := strings.Contains(log, tok[:20])
		switch {
		case name == "sandboxed" && leaked:
			t.Fatalf("the sandboxed engine read the worker's token:\n%s", log)
		case name == "unsandboxed" && !leaked:
			t.Fatalf("control: the unsandboxed engine found no token, so the test cannot see a leak:\n%s", log)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// flood prints 1.2 GB on its bench; hoard holds memory in memfds; fill
// writes into its directory until it cannot.
const flood = `#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
	static char block[1 << 20];
	memset(block, 'x', sizeof block);
	for (int i = 0; i < sizeof block; i += 100) block[i] = '\n';
	for (int i = 0; i < 1200; i++) if (write(1, block, sizeof block) < 0) return 3;
	printf("Nodes searched  : 1\n");
	return 0;
}
`

const hoard = `#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
	static char block[1 << 20];
	memset(block, 7, sizeof block);
	long total = 0;
	for (int i = 0; i < 1536; i++) {
		static int fd = -1;
		if (i % 64 == 0) fd = memfd_create("hoard", 0);
		if (fd < 0) { perror("memfd_create"); break; }
		if (write(fd, block, sizeof block) < 0) { perror("write"); break; }
		total += sizeof block;
	}
	printf("hoard: held %ld MiB\n", total >> 20);
	printf("Nodes searched  : 1\n");
	return 0;
}
`

const fill = `#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
int main(void) {
	static char block[1 << 20];
	memset(block, 'f', sizeof block);
	long total = 0;
	char name[32];
	for (int i = 0; i < 1200; i++) {
		snprintf(name, sizeof name, "fill-%d", i / 100);
		int fd = open(name, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0) { printf("fill: open: %s\n", strerror(errno)); break; }
		ssize_t n = write(fd, block, sizeof block);
		close(fd);
		if (n < 0) { printf("fill: write: %s\n", strerror(errno)); break; }
		total += n;
		if (n < sizeof block) { printf("fill: short write\n"); break; }
	}
	printf("fill: wrote %ld MiB\n", total >> 20);
	printf("Nodes searched  : 1\n");
	return 0;
}
`

// peakRSS is a process's peak resident size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// An uploaded engine that prints 1.2 GB on its bench, a source tree whose
// build prints 1.5 GB, an engine that hoards 1.5 GB in memfds, and one
// that fills its directory: the worker stays under 200 MB resident, each
// is refused with the end of its output, the memfds are refused, the
// directory fills to the quota and is gone when the test ends. The
// control is an honest uploaded engine, which plays.
func TestUploadedEngineCannotExhaustItsWorker(t *testing.T) {
	requireTools(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	w, dir := startWorkerIn(t, addr, "w1", "--engine-disk-mb", "64")
	runDir := filepath.Join(dir, "data", "run")

	loud := t.TempDir()
	os.WriteFile(filepath.Join(loud, "Makefile"), []byte("engine:\n\tyes 'a build that will not stop talking' | head -c 1500000000\n\tcp /bin/true engine\n"), 0o644)
	cases := []struct {
		name, engine, want string
	}{
		{"bench flood", "name=bad,upload=" + cEngine(t, "flood", flood) + ",bench=7", "printed more than"},
		{"bench flood on stderr", "name=bad,upload=" + cEngine(t, "errflood", strings.Replace(flood, "write(1,", "write(2,", 1)) + ",bench=7", "printed more than"},
		{"build flood", "name=bad,source=" + loud + ",build=make,bench=7", "printed more than"},
		{"memfd hoard", "name=bad,upload=" + cEngine(t, "hoard", hoard) + ",bench=7", "memfd_create: Operation not permitted"},
		{"disk fill", "name=bad,upload=" + cEngine(t, "fill", fill) + ",bench=7", "fill: wrote 6"},
	}
	for _, tc := range cases {
		id := clientSubmit(t, addr, client, tc.engine, "name=base,builtin")
		j := waitRefused(t, addr, id, "bad", 1)
		var detail string
		for _, c := range j.GetArtifactChecks() {
			if c.GetEngine() == "bad" {
				detail += c.GetDetail() + "\n" + c.GetLog()
			}
		}
		cli(t, "cancel", id, "--coordinator", addr, "--token", client)
		if !strings.Contains(detail, tc.want) {
			t.Errorf("%s: refusal without %q:\n%s", tc.name, tc.want, lastLines(detail, 8))
		}
		if ents, _ := os.ReadDir(runDir); len(ents) != 0 {
			t.Errorf("%s: engine directories left after the test: %v", tc.name, ents)
		}
		peak := peakRSS(t, w.cmd.Process.Pid)
		t.Logf("%s: worker peak RSS %d MiB; refusal: %s", tc.name, peak>>20, lastLines(detail, 2))
		if peak > 200<<20 {
			t.Fatalf("%s: the worker reached %d MiB resident", tc.name, peak>>20)
		}
	}

	// The control: an honest uploaded engine (the tiny C engine) plays.
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	id := clientSubmit(t, addr, client, "name=tiny,source="+src+",build=make EXE=engine", "name=base,builtin")
	j := waitFor(t, dial(t, addr, token), id, 3*time.Minute, "the honest engine's test", done)
	if g := j.GetMatchProgress().GetGames(); g != 2 {
		t.Fatalf("honest engine: %d games", g)
	}
	if ents, _ := os.ReadDir(runDir); len(ents) != 0 {
		t.Errorf("engine directories left after the honest test: %v", ents)
	}
}

// A worker whose operator did not give --allow-uploads takes no uploaded
// engine, even with a data directory: it does not offer to, so the test
// is blocked with the reason and nothing is fetched or run.
func TestWorkerWithoutAllowUploadsRunsNoUploadedEngine(t *testing.T) {
	requireTools(t)
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	client := newCredential(t, addr, "client")
	dir := t.TempDir()
	args := []string{"worker", "--coordinator", addr, "--token", workerToken(t, addr), "--threads", "1", "--hash", "16",
		"--log-level", "info", "--name", "plain", "--data", filepath.Join(dir, "data")}
	start(t, "worker", args...)
	id := clientSubmit(t, addr, client, "name=up,upload="+cEngine(t, "fill", fill)+",bench=7", "name=base,builtin")
	j := waitFor(t, dial(t, addr, token), id, 2*time.Minute, "the test blocked", func(j *arbiterv1.Job) bool {
		return strings.Contains(j.GetProgress().GetBlocked(), "does not run uploaded engines")
	})
	t.Logf("blocked: %s", j.GetProgress().GetBlocked())
	if g := j.GetMatchProgress().GetGames(); g != 0 || len(j.GetArtifactChecks()) != 0 {
		t.Fatalf("%d games, artifact checks %v", g, j.GetArtifactChecks())
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "data", "artifacts", "objects")); len(ents) != 0 {
		t.Fatalf("the worker fetched: %v", ents)
	}
}
