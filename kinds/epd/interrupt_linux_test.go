package epd

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold blanks, so read after ')'.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestInterruptStopsEngines: Ctrl-C (SIGINT) during a run of the real
// binary with two Stockfish processes searching 10 s a move ends the run
// within seconds, with a non-zero status, and leaves no engine process
// behind. The control: the engines were running (seen as the binary's
// children) before the signal.
func TestInterruptStopsEngines(t *testing.T) {
	needStockfish(t)
	bin := buildArbiter(t)
	cmd := exec.Command(bin, "epd", "--engine", "cmd="+stockfish, "--engine", "name=sf2,cmd="+stockfish,
		"--suite", "testdata/wac.epd", "--each", "movetime=10000", "--concurrency", "2")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil { // the header
		t.Fatal(err)
	}
	var engines []int
	for deadline := time.Now().Add(30 * time.Second); len(engines) < 2 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		engines = childrenOf(t, cmd.Process.Pid)
	}
	if len(engines) < 2 {
		t.Fatalf("control: %d engine processes under the binary, want 2", len(engines))
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("exit status 0 after SIGINT")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after SIGINT")
	}
	t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
	for _, pid := range engines {
		if alive(pid) {
			t.Errorf("engine process %d outlived the run", pid)
		}
	}
}
