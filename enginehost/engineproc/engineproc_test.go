package engineproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests run real processes: this test binary itself, re-executed as a
// small engine (helperMain) that echoes, sleeps, crashes, forks a child
// and floods its output on command.

const helperEnv = "ENGINEPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "child":
		// A grandchild that outlives nothing: it only waits to be killed.
		fmt.Println(os.Getpid())
		time.Sleep(time.Hour)
	default:
		helperMain(os.Getenv(helperEnv))
	}
	os.Exit(0)
}

// helperMain reads commands, one per line:
//
//	echo TEXT     prints "echo: TEXT"
//	sleep MS      sleeps, then prints "slept"
//	half MS       prints "hal", sleeps, prints "f" and a newline
//	crash CODE    prints "dying" to stderr and exits with CODE
//	fork          starts a child that prints its pid and sleeps; prints the pid
//	flood N       prints N numbered lines at once
//	long N        prints one line of N 'x', then "after"
//	spew          prints lines without end
//	nul           prints "a", NUL, "b", NUL
//	quit          exits 0 (unless mode is "stubborn")
//
// In mode "stubborn" it ignores quit and the end of its input.
func helperMain(mode string) {
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	var children []*exec.Cmd
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		n, _ := strconv.Atoi(arg)
		switch cmd {
		case "echo":
			fmt.Fprintf(out, "echo: %s\n", arg)
		case "sleep":
			time.Sleep(time.Duration(n) * time.Millisecond)
			fmt.Fprintln(out, "slept")
		case "half":
			fmt.Fprint(out, "hal")
			out.Flush()
			time.Sleep(time.Duration(n) * time.Millisecond)
			fmt.Fprintln(out, "f")
		case "crash":
			fmt.Fprintln(os.Stderr, "dying on purpose")
			out.Flush()
			os.Exit(n)
		case "fork":
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), helperEnv+"=child")
			c.Stdout = out
			out.Flush()
			pr, pw, _ := os.Pipe()
			c.Stdout = pw
			if err := c.Start(); err != nil {
				fmt.Fprintln(out, "fork failed:", err)
				break
			}
			pw.Close()
			line, _ := bufio.NewReader(pr).ReadString('\n')
			children = append(children, c)
			fmt.Fprint(out, line)
		case "flood":
			for i := 0; i < n; i++ {
				fmt.Fprintf(out, "line %d\n", i)
			}
		case "spew":
			for i := 0; ; i++ {
				fmt.Fprintf(out, "info spew %d\n", i)
				if i%64 == 0 {
					out.Flush()
				}
			}
		case "nul":
			out.WriteString("a\x00b\x00\n")
		case "long":
			out.WriteString(strings.Repeat("x", n))
			out.WriteString("\nafter\n")
		case "quit":
			if mode != "stubborn" {
				out.Flush()
				os.Exit(0)
			}
		}
		out.Flush()
	}
	if mode == "stubborn" {
		time.Sleep(time.Hour)
	}
	_ = children
}

func start(t *testing.T, mode string, cfg Config) *Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = exe
	cfg.Env = append(os.Environ(), helperEnv+"="+mode)
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop("", 0) })
	return p
}

// readers runs a test with each line reader: the one of this platform and
// the goroutine reader Windows uses.
func readers(t *testing.T, f func(t *testing.T, cfg Config)) {
	t.Run("platform", func(t *testing.T) { f(t, Config{}) })
	t.Run("goroutine", func(t *testing.T) { f(t, Config{goroutineReader: true}) })
}

func within(d time.Duration) time.Time { return time.Now().Add(d) }

func mustRead(t *testing.T, p *Proc, want string) {
	t.Helper()
	line, err := p.ReadLine(within(5 * time.Second))
	if err != nil || string(line) != want {
		t.Fatalf("ReadLine = %q, %v; want %q", line, err, want)
	}
}

func TestEchoTimeoutAndStillUsable(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		if err := p.WriteLine("echo hello"); err != nil {
			t.Fatal(err)
		}
		mustRead(t, p, "echo: hello")
		t0 := time.Now()
		line, err := p.ReadLine(within(50 * time.Millisecond))
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("ReadLine with nothing to read = %q, %v; want ErrTimeout", line, err)
		}
		if el := time.Since(t0); el < 50*time.Millisecond || el > 2*time.Second {
			t.Errorf("timed out after %v, want about 50ms", el)
		}
		// A timeout leaves the process usable.
		// (Output that arrives before a late timer's wake-up is returned,
		// so the helper sleeps far longer than the deadline.)
		p.WriteLine("sleep 1000")
		if line, err := p.ReadLine(within(10 * time.Millisecond)); !errors.Is(err, ErrTimeout) {
			t.Fatalf("want a timeout while the helper sleeps, got %q, %v", line, err)
		}
		mustRead(t, p, "slept")
		p.WriteLine("echo again")
		mustRead(t, p, "echo: again")
		if ex := p.Stop("quit", 5*time.Second); ex.Code != 0 || ex.Killed || !ex.Exited {
			t.Errorf("polite stop: %+v (%s)", ex, ex)
		}
	})
}

// A line cut in two by a timeout is whole at the next read.
func TestPartialLineSurvivesTimeout(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		p.WriteLine("half 300")
		if line, err := p.ReadLine(within(100 * time.Millisecond)); !errors.Is(err, ErrTimeout) {
			t.Fatalf("ReadLine = %q, %v; want ErrTimeout", line, err)
		}
		mustRead(t, p, "half")
	})
}

// Past the deadline nothing is read, even output that is waiting (it stays
// for the next read): an engine flooding its output must still time out.
func TestDeadlineHoldsAgainstWaitingOutput(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		p.WriteLine("echo x")
		mustRead(t, p, "echo: x")
		p.WriteLine("echo y")
		time.Sleep(100 * time.Millisecond)
		if line, err := p.ReadLine(time.Now().Add(-time.Second)); !errors.Is(err, ErrTimeout) {
			t.Fatalf("ReadLine(past) = %q, %v; want ErrTimeout", line, err)
		}
		mustRead(t, p, "echo: y")

		p.WriteLine("spew")
		deadline := within(200 * time.Millisecond)
		n := 0
		for {
			_, err := p.ReadLine(deadline)
			if errors.Is(err, ErrTimeout) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n++; time.Now().After(deadline.Add(2 * time.Second)) {
				t.Fatalf("still reading %d lines of a flood 2s past the deadline", n)
			}
		}
		if n == 0 || time.Now().After(deadline.Add(time.Second)) {
			t.Errorf("the flood gave %d lines and ended %v after the deadline", n, time.Since(deadline))
		}
	})
}

func TestCrashReportsExitAndStderr(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		p.WriteLine("crash 3")
		t0 := time.Now()
		line, err := p.ReadLine(within(5 * time.Second))
		if !errors.Is(err, ErrEOF) {
			t.Fatalf("ReadLine after a crash = %q, %v; want ErrEOF", line, err)
		}
		if el := time.Since(t0); el > time.Second {
			t.Errorf("the end of output came %v after the crash", el)
		}
		desc := p.Describe()
		if !strings.Contains(desc, "exited with status 3") || !strings.Contains(desc, "dying on purpose") {
			t.Errorf("Describe = %q, want the exit status and stderr", desc)
		}
		if p.Alive() {
			t.Error("Alive after the exit")
		}
		// The process is gone: Stop, even without a grace, kills nothing.
		ex := p.Stop("", 0)
		if ex.Code != 3 || ex.Killed {
			t.Errorf("Exit = %+v", ex)
		}
		if err := p.WriteLine("echo x"); !errors.Is(err, ErrStopped) {
			t.Errorf("write after Stop: %v", err)
		}
		if _, err := p.ReadLine(time.Time{}); !errors.Is(err, ErrStopped) {
			t.Errorf("read after Stop: %v", err)
		}
	})
}

func TestStopKillsAnEngineThatIgnoresQuit(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "stubborn", cfg)
		p.WriteLine("echo hi")
		mustRead(t, p, "echo: hi")
		t0 := time.Now()
		ex := p.Stop("quit", 200*time.Millisecond)
		if !ex.Killed || ex.Code == 0 {
			t.Errorf("Exit = %+v, want killed", ex)
		}
		if el := time.Since(t0); el < 200*time.Millisecond || el > 3*time.Second {
			t.Errorf("Stop took %v, want the grace (200ms) and a little", el)
		}
		if !strings.Contains(ex.String(), "killed by arbiter") {
			t.Errorf("Exit.String = %q", ex)
		}
	})
}

func TestWatchKillsOnCancel(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		ctx, cancel := context.WithCancel(context.Background())
		p.Watch(ctx)
		p.WriteLine("sleep 100000")
		time.AfterFunc(100*time.Millisecond, cancel)
		t0 := time.Now()
		if _, err := p.ReadLine(time.Time{}); !errors.Is(err, ErrEOF) {
			t.Fatalf("ReadLine after cancel: %v, want ErrEOF", err)
		}
		if el := time.Since(t0); el > 3*time.Second {
			t.Errorf("the cancelled read took %v", el)
		}
		if ex := p.Stop("", 0); !ex.Killed {
			t.Errorf("Exit = %+v, want killed", ex)
		}
	})
}

// Unwatch: a process kept after a request outlives the request's context.
func TestUnwatchKeepsTheProcess(t *testing.T) {
	p := start(t, "echo", Config{})
	ctx, cancel := context.WithCancel(context.Background())
	p.Watch(ctx)
	p.Unwatch()
	cancel()
	time.Sleep(50 * time.Millisecond)
	p.WriteLine("echo alive")
	mustRead(t, p, "echo: alive")
}

func TestFloodAndLongLines(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		const n = 200000
		p.WriteLine("flood " + strconv.Itoa(n))
		for i := 0; i < n; i++ {
			line, err := p.ReadLine(within(10 * time.Second))
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			if want := "line " + strconv.Itoa(i); string(line) != want {
				t.Fatalf("line %d = %q", i, line)
			}
		}
		for _, size := range []int{maxLine - 1, maxLine + 10, 3 * maxBuf} {
			p.WriteLine("long " + strconv.Itoa(size))
			line, err := p.ReadLine(within(10 * time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if want := min(size, maxLine); len(line) != want || strings.Trim(string(line), "x") != "" {
				t.Fatalf("a line of %d bytes came back as %d bytes, want %d", size, len(line), want)
			}
			mustRead(t, p, "after")
		}
	})
}

// NUL bytes are never protocol text: dropped, with every reader.
func TestNULsAreDropped(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		p := start(t, "echo", cfg)
		p.WriteLine("nul")
		if line, err := p.ReadLine(within(5 * time.Second)); err != nil || string(line) != "ab" {
			t.Fatalf("ReadLine = %q, %v", line, err)
		}
		p.WriteLine("echo after")
		mustRead(t, p, "echo: after")
	})
}

func TestMissingProgram(t *testing.T) {
	for _, path := range []string{"/nonexistent/engine", "no-such-engine-anywhere"} {
		_, err := Start(Config{Path: path})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Start(%q) = %v, want an error naming it", path, err)
		}
	}
	if _, err := Start(Config{}); err == nil {
		t.Error("Start with no program succeeded")
	}
}

func TestRelativePathRunsFromDir(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, dir+"/helper"); err != nil {
		t.Skip("no symlinks:", err)
	}
	p, err := Start(Config{Path: "./helper", Dir: dir, Env: append(os.Environ(), helperEnv+"=echo")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop("quit", time.Second)
	p.WriteLine("echo dir")
	mustRead(t, p, "echo: dir")
}

func TestTrace(t *testing.T) {
	var tr strings.Builder
	p := start(t, "echo", Config{Trace: &tr})
	p.WriteLine("echo t")
	mustRead(t, p, "echo: t")
	p.Stop("quit", time.Second)
	if tr.String() != "> echo t\n< echo: t\n> quit\n" {
		t.Errorf("trace %q", tr.String())
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	tb.Write([]byte("abc"))
	tb.Write([]byte("defgh"))
	tb.Write([]byte("ij"))
	if tb.String() != "cdefghij" {
		t.Errorf("%q", tb.String())
	}
	tb.Write([]byte("0123456789"))
	if tb.String() != "23456789" {
		t.Errorf("%q", tb.String())
	}
}

// A quiet period holds output back until it ends, then hands over all that
// gathered; the engine's exit or the read's deadline end it early, and
// reads after it wait for output as before.
func TestQuietPeriod(t *testing.T) {
	p := start(t, "echo", Config{})
	p.WriteLine("echo a")
	mustRead(t, p, "echo: a")

	t0 := time.Now()
	p.QuietUntil(t0.Add(200 * time.Millisecond))
	p.WriteLine("flood 3")
	mustRead(t, p, "line 0")
	if el := time.Since(t0); el < 200*time.Millisecond {
		t.Errorf("the first line of a 200ms quiet period came after %v", el)
	}
	mustRead(t, p, "line 1")
	mustRead(t, p, "line 2")
	// After it, output is waited for again (the pipe is watched again).
	p.WriteLine("sleep 50")
	mustRead(t, p, "slept")

	// The read's deadline ends a quiet period; the output is there after.
	t0 = time.Now()
	p.QuietUntil(t0.Add(time.Hour))
	p.WriteLine("echo b")
	if line, err := p.ReadLine(within(100 * time.Millisecond)); !errors.Is(err, ErrTimeout) {
		t.Fatalf("ReadLine past its deadline in a quiet period = %q, %v; want ErrTimeout", line, err)
	}
	mustRead(t, p, "echo: b")
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("a quiet period cut by a 100ms deadline lasted %v", el)
	}

	// The engine's exit ends one.
	t0 = time.Now()
	p.QuietUntil(t0.Add(time.Hour))
	p.WriteLine("crash 3")
	if line, err := p.ReadLine(within(time.Minute)); !errors.Is(err, ErrEOF) {
		t.Fatalf("ReadLine after the engine died = %q, %v; want ErrEOF", line, err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("the engine's exit ended an hour's quiet period after %v", el)
	}
}

// TestLookPathRelativeToDot: cmd=./engine with dir=. (Fishtest's engine
// settings) is the engine in that directory, not a program on $PATH.
func TestLookPathRelativeToDot(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("myengine", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".", dir} {
		if _, err := LookPath("./myengine", d); err != nil {
			t.Errorf("LookPath(./myengine, %s): %v", d, err)
		}
	}
}

// StderrCopy receives all of stderr, past the tail's size, as well as
// the tail keeping its end; without it the tail alone (the control).
func TestStderrCopy(t *testing.T) {
	readers(t, func(t *testing.T, cfg Config) {
		copied := &tailBuffer{max: 1 << 20} // all of it
		cfg.StderrCopy, cfg.StderrTail = copied, 4
		p := start(t, "echo", cfg)
		p.WriteLine("crash 3")
		if _, err := p.ReadLine(within(5 * time.Second)); !errors.Is(err, ErrEOF) {
			t.Fatalf("ReadLine after a crash: %v", err)
		}
		if !p.WaitStderr(5 * time.Second) {
			t.Fatal("no end of stderr after the crash")
		}
		if tail := p.Stderr(); !strings.Contains(copied.String(), "dying on purpose") || len(tail) > 4 {
			t.Fatalf("copied %q, tail %q", copied.String(), tail)
		}
	})
}
