//go:build unix

package engineproc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether pid is dead: no such process, or a zombie (in a
// container the reaper of orphans may be slow or absent).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}

// Killing the engine kills the children it started (its process group).
func TestKillTakesTheChildren(t *testing.T) {
	for _, stop := range []struct {
		name string
		f    func(p *Proc)
	}{
		{"stop", func(p *Proc) { p.Stop("", 0) }},
		{"stubborn grace", func(p *Proc) { p.Stop("quit", 100*time.Millisecond) }},
		{"kill", func(p *Proc) { p.Kill(); p.Stop("", 0) }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			p := start(t, "stubborn", Config{})
			p.WriteLine("fork")
			line, err := p.ReadLine(within(10 * time.Second))
			if err != nil {
				t.Fatal(err)
			}
			child, err := strconv.Atoi(string(line))
			if err != nil {
				t.Fatalf("fork answered %q", line)
			}
			if gone(child) {
				t.Fatalf("child %d is not running", child)
			}
			stop.f(p)
			deadline := time.Now().Add(5 * time.Second)
			for !gone(child) {
				if time.Now().After(deadline) {
					syscall.Kill(child, syscall.SIGKILL)
					t.Fatalf("child %d survived the engine's kill", child)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
