//go:build linux

// Command relayfloor measures what relaying a UCI search costs a Go process
// on this machine, with no chess in it: the floor under `arbiter match`'s
// runner CPU per game (see docs/match.md, "Figures").
//
// Each of -workers goroutines owns two engine processes and, -searches
// times, alternating between them as a game does, writes one fixed
// `position` and `go nodes N` and reads lines until `bestmove`. The CPU
// this process used meanwhile (getrusage: its own threads, not the
// engines') is printed per 137 searches, the length of an average game in
// the bench's setup. How the reader waits is -mode:
//
//	engineproc  the runner's own reader (enginehost/engineproc), with a quiet
//	            period of -quiet per search as the runner asks for one
//	poller      os/exec pipes in the runtime's poller, as most Go programs
//	            read a child: one wake-up per line the engine writes
//	blocking    blocking read(2) through syscall.Read (the runtime knows)
//	raw         ppoll(2) as a raw system call: the goroutine keeps its P
//	            while it waits and never parks. It must yield before each
//	            wait (sysmon signals a goroutine that runs 10ms without a
//	            reschedule), and the yield wakes another thread; and while
//	            it waits nothing else can use its P, which is why the
//	            runner cannot wait this way at all
//
// c/relay.c does the same in C with blocking reads, for comparison.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/arbiter-chess/arbiter/base/schedbatch"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
)

const searchesPerGame = 137 // nodes=5000, Stockfish vs itself, the 8-move book

type relay interface {
	search(cmd []byte) error // write cmd, read until bestmove
	close()                  // end the engine
}

// config is one measurement.
type config struct {
	mode, engine             string
	workers, searches, nodes int
	quiet                    time.Duration
	batch                    bool
}

var starters = map[string]func(string, time.Duration) (relay, error){
	"engineproc": startEngineproc, "poller": startPoller, "blocking": startBlocking, "raw": startRaw,
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "engineproc", "engineproc, poller, blocking or raw")
	flag.StringVar(&c.engine, "engine", "/usr/games/stockfish", "UCI engine")
	flag.IntVar(&c.workers, "workers", 2, "concurrent games")
	flag.IntVar(&c.searches, "searches", 20*searchesPerGame, "searches per worker")
	flag.IntVar(&c.nodes, "nodes", 5000, "nodes per search")
	flag.DurationVar(&c.quiet, "quiet", 0, "sleep this long after each go before reading (0: none)")
	flag.BoolVar(&c.batch, "batch", false, "run under SCHED_BATCH with long slices, as a match without clocks does (Linux)")
	flag.Parse()
	report, err := measure(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relayfloor:", err)
		os.Exit(2)
	}
	fmt.Println(report)
}

// measure starts the engines, relays the searches and reports the CPU
// this process spent on them.
func measure(c config) (string, error) {
	if c.workers < 1 || c.searches < 1 || c.nodes < 1 || c.quiet < 0 {
		return "", fmt.Errorf("-workers, -searches and -nodes must be positive, -quiet not negative")
	}
	start := starters[c.mode]
	if start == nil {
		return "", fmt.Errorf("-mode %q: want engineproc, poller, blocking or raw", c.mode)
	}
	if c.batch {
		if err := schedbatch.Apply(); err != nil {
			return "", fmt.Errorf("-batch: %w", err)
		}
	}
	pairs := make([][2]relay, c.workers)
	for i := range pairs {
		for j := range pairs[i] {
			r, err := start(c.engine, c.quiet)
			if err != nil {
				return "", err
			}
			defer r.close()
			pairs[i][j] = r
		}
	}
	cmd := []byte("position startpos moves e2e4 e7e5 g1f3 b8c6\ngo nodes " + strconv.Itoa(c.nodes) + "\n")
	before, switchesBefore := cpuTime(), voluntarySwitches()
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, c.workers)
	for _, pair := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range c.searches {
				if err := pair[i%2].search(cmd); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	total := c.workers * c.searches
	cpu := cpuTime() - before
	return fmt.Sprintf("mode=%s quiet=%v batch=%v workers=%d searches=%d GOMAXPROCS=%d: wall %v, CPU %v, %.2f ms per %d searches, %.2f voluntary thread switches per search",
		c.mode, c.quiet, c.batch, c.workers, total, runtime.GOMAXPROCS(0), time.Since(began).Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(cpu)/1e6/float64(total)*searchesPerGame, searchesPerGame, float64(voluntarySwitches()-switchesBefore)/float64(total)), nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// voluntarySwitches sums voluntary_ctxt_switches over this process's threads.
func voluntarySwitches() int {
	tasks, _ := os.ReadDir("/proc/self/task")
	n := 0
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				n += k
			}
		}
	}
	return n
}

const handshake = "uci\nsetoption name Hash value 16\nisready\n"

// engineproc: the runner's reader.

type engineprocRelay struct {
	p     *engineproc.Proc
	quiet time.Duration
}

func startEngineproc(path string, quiet time.Duration) (relay, error) {
	p, err := engineproc.Start(engineproc.Config{Path: path})
	if err != nil {
		return nil, err
	}
	r := &engineprocRelay{p: p, quiet: quiet}
	return r, r.exchange([]byte(handshake), "readyok")
}

func (r *engineprocRelay) close() { r.p.Stop("quit", time.Second) }

func (r *engineprocRelay) search(cmd []byte) error {
	if r.quiet > 0 {
		r.p.QuietUntil(time.Now().Add(r.quiet))
	}
	return r.exchange(cmd, "bestmove")
}

func (r *engineprocRelay) exchange(cmd []byte, until string) error {
	if err := r.p.Write(cmd); err != nil {
		return err
	}
	// One deadline per search, as the runner sets it: a new one per line
	// would reset the poller's timer every line.
	deadline := time.Now().Add(time.Minute)
	for {
		line, err := r.p.ReadLine(deadline)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(line, []byte(until)) {
			return nil
		}
	}
}

// poller: os/exec's pipes, read through bufio.

type pollerRelay struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	quiet time.Duration
}

func (r *pollerRelay) close() {
	r.in.Close() // the engine reads EOF and exits
	r.cmd.Wait()
}

func startPoller(path string, quiet time.Duration) (relay, error) {
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &pollerRelay{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), quiet: quiet}
	if _, err := io.WriteString(in, handshake); err != nil {
		return nil, err
	}
	return r, r.readUntil("readyok")
}

func (r *pollerRelay) search(cmd []byte) error {
	if _, err := r.in.Write(cmd); err != nil {
		return err
	}
	if r.quiet > 0 {
		time.Sleep(r.quiet)
	}
	return r.readUntil("bestmove")
}

func (r *pollerRelay) readUntil(word string) error {
	for {
		line, err := r.out.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
		if bytes.HasPrefix(line, []byte(word)) {
			return nil
		}
	}
}

// blocking and raw: plain pipes, outside the runtime's poller.

type fdRelay struct {
	pid     int
	in, out int
	raw     bool
	quiet   time.Duration
	buf     []byte
	n       int
}

func startBlocking(path string, quiet time.Duration) (relay, error) {
	return startFD(path, quiet, false)
}

func startRaw(path string, quiet time.Duration) (relay, error) { return startFD(path, quiet, true) }

func startFD(path string, quiet time.Duration, raw bool) (relay, error) {
	var stdin, stdout [2]int
	if err := syscall.Pipe2(stdin[:], syscall.O_CLOEXEC); err != nil {
		return nil, err
	}
	if err := syscall.Pipe2(stdout[:], syscall.O_CLOEXEC); err != nil {
		return nil, err
	}
	pid, err := syscall.ForkExec(path, []string{path}, &syscall.ProcAttr{Files: []uintptr{uintptr(stdin[0]), uintptr(stdout[1]), 2}})
	if err != nil {
		return nil, err
	}
	syscall.Close(stdin[0])
	syscall.Close(stdout[1])
	r := &fdRelay{pid: pid, in: stdin[1], out: stdout[0], raw: raw, quiet: quiet, buf: make([]byte, 64<<10)}
	if raw {
		if err := syscall.SetNonblock(r.out, true); err != nil {
			return nil, err
		}
	}
	if _, err := syscall.Write(r.in, []byte(handshake)); err != nil {
		return nil, err
	}
	return r, r.readUntil("readyok")
}

func (r *fdRelay) close() {
	syscall.Close(r.in) // the engine reads EOF and exits
	var ws syscall.WaitStatus
	syscall.Wait4(r.pid, &ws, 0, nil)
	syscall.Close(r.out)
}

func (r *fdRelay) search(cmd []byte) error {
	if _, err := syscall.Write(r.in, cmd); err != nil {
		return err
	}
	if r.quiet > 0 {
		if r.raw {
			r.ppoll(0, r.quiet) // no events asked: only a hang-up ends it early
		} else {
			time.Sleep(r.quiet)
		}
	}
	return r.readUntil("bestmove")
}

func (r *fdRelay) readUntil(word string) error {
	for {
		k, err := r.read(r.buf[r.n:])
		if err != nil {
			return err
		}
		if k == 0 {
			return io.ErrUnexpectedEOF
		}
		r.n += k
		if bytes.Contains(r.buf[:r.n], []byte(word)) {
			r.n = 0
			return nil
		}
		if i := bytes.LastIndexByte(r.buf[:r.n], '\n'); i >= 0 {
			r.n = copy(r.buf, r.buf[i+1:r.n])
		}
	}
}

func (r *fdRelay) read(p []byte) (int, error) {
	if !r.raw {
		return syscall.Read(r.out, p)
	}
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(r.out), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EAGAIN {
			if errno != 0 {
				return 0, errno
			}
			return int(n), nil
		}
		r.ppoll(1, time.Minute) // POLLIN
	}
}

// ppoll waits as a raw system call. It yields first: sysmon would otherwise
// see a goroutine that has run for 10ms and interrupt it with a signal.
func (r *fdRelay) ppoll(events int16, d time.Duration) {
	runtime.Gosched()
	fd := struct {
		fd              int32
		events, revents int16
	}{int32(r.out), events, 0}
	ts := syscall.NsecToTimespec(int64(d))
	syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}
