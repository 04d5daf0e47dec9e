//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/auth"
)

// TestFrozenCoordinatorNotAnswering: a coordinator that accepts TCP
// connections but answers nothing (a real coordinator process stopped
// with SIGSTOP: the kernel still completes the handshake) is reported as
// not answering, exit status 3, within a bounded time; not as a TLS
// coordinator that closed the connection.
func TestFrozenCoordinatorNotAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator")
	}
	t.Setenv(auth.EnvToken, "")
	const token = "frozen-admin-token"
	coord := startArbiterProcess(t, []string{auth.EnvToken + "=" + token}, "coordinator", "--listen", "127.0.0.1:0",
		"--data", filepath.Join(t.TempDir(), "data"))
	addr := coord.waitLine(t, "arbiter coordinator: listening on ")
	conn := []string{"--coordinator", addr, "--token", token}
	if out, _, err := runArbiter(t, "", append([]string{"status"}, conn...)...); err != nil {
		t.Fatalf("status of the live coordinator: %v\n%s", err, out)
	}
	if err := coord.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Runs before the process's own cleanup (SIGTERM), which a stopped
	// process would not see.
	t.Cleanup(func() { coord.cmd.Process.Signal(syscall.SIGCONT) })
	// kill(2) returns before the process has stopped; on a loaded machine
	// it could still answer the call below (and then freeze mid-call, a
	// different failure). Wait until the kernel says it is stopped.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", coord.cmd.Process.Pid))
		if err != nil {
			break // no /proc: take kill's word for it
		}
		// "pid (comm) S ...": the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the coordinator did not stop: %s", stat)
		}
	}

	start := time.Now()
	_, _, err := runArbiter(t, "", append([]string{"status"}, conn...)...)
	took := time.Since(start)
	if exitCode(err) != 3 || err == nil || !strings.Contains(err.Error(), "coordinator "+addr+" unreachable: not answering") {
		t.Errorf("status of a frozen coordinator: exit %d, %v; want 3 and \"not answering\"", exitCode(err), err)
	}
	if err != nil && strings.Contains(err.Error(), "--ca") {
		t.Errorf("a frozen plaintext coordinator is not a TLS one: %v", err)
	}
	// Bounded: the call's own deadline (clusterclient.ShortTimeout) and
	// its retries, not a hang.
	t.Logf("answered in %v: %v", took.Round(time.Millisecond), err)
	if took > 2*time.Minute {
		t.Errorf("status took %v against a frozen coordinator", took)
	}
}
