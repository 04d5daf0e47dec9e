package engineproc

import (
	"errors"
	"testing"
	"time"
)

// A search that ends within its quiet period is read without the pipe ever
// being armed again (each epoll_ctl costs the runner on every search); a
// read that must wait arms it, and the next quiet period switches it off.
func TestQuietPeriodLeavesPipeOff(t *testing.T) {
	p := start(t, "echo", Config{})
	s, ok := p.lines.src.(*epollSource)
	if !ok {
		t.Skipf("source is %T, not epollSource (no epoll or timerfd here)", p.lines.src)
	}
	p.WriteLine("echo a")
	mustRead(t, p, "echo: a")
	if !s.armed {
		t.Fatal("the pipe is off after a read that waited")
	}

	p.QuietUntil(time.Now().Add(100 * time.Millisecond))
	p.WriteLine("flood 3")
	for _, want := range []string{"line 0", "line 1", "line 2"} {
		mustRead(t, p, want)
	}
	if s.armed {
		t.Error("the pipe was armed to read output that had all arrived within the quiet period")
	}

	// The next read has to wait: it arms the pipe and sees the output.
	p.WriteLine("sleep 50")
	mustRead(t, p, "slept")
	if !s.armed {
		t.Error("the pipe is off after a read that waited for it")
	}
}

// An engine that died before a quiet period began ends it at once: its
// pipe's hang-up was seen, and forgotten, by the runtime's poller before
// the wait, so the goroutine that reaps it says so.
func TestQuietPeriodAfterExit(t *testing.T) {
	p := start(t, "echo", Config{})
	if _, ok := p.lines.src.(*epollSource); !ok {
		t.Skipf("source is %T, not epollSource (no epoll or timerfd here)", p.lines.src)
	}
	p.WriteLine("crash 0")
	if !p.WaitExit(5 * time.Second) {
		t.Fatal("the engine did not exit")
	}
	time.Sleep(50 * time.Millisecond) // let the poller take the hang-up
	t0 := time.Now()
	p.QuietUntil(t0.Add(time.Hour))
	if line, err := p.ReadLine(within(10 * time.Second)); !errors.Is(err, ErrEOF) {
		t.Fatalf("ReadLine in a quiet period after the engine died = %q, %v; want ErrEOF", line, err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("a quiet period begun after the engine died lasted %v", el)
	}
}
