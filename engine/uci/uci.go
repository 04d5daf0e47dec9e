// Package uci is the Universal Chess Interface front end of Arbiter's
// engine. It knows the engine only through the Engine interface and the
// option table the engine publishes, so the protocol code can be tested
// with a fake engine and the engine has no I/O.
//
// Concurrency: the command loop reads stdin on one goroutine and never
// blocks on a search, so `isready` and `stop` are answered while searching;
// the search runs on its own goroutine and writes `info` and `bestmove`.
// All output goes through one mutex-guarded writer, so lines never
// interleave.
package uci

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/search"
)

// Running is a search in progress.
type Running interface {
	Wait() (engine.Move, search.Info)
}

// Engine is what the front end needs from an engine.
type Engine interface {
	Options() []search.OptionSpec
	SetOption(name, value string) error
	NewGame()
	// Start begins a search; limits are in force when it returns.
	Start(ctx context.Context, pos engine.Position, history []uint64, lim search.Limits) Running
	PonderHit()
	SetInfoHandler(func(search.Info))
}

// tablebaseReporter is an engine that says which tables SyzygyPath found
// (the built-in one); GUIs show it as Stockfish's "Found N tablebases".
type tablebaseReporter interface {
	TablebaseSummary() string
}

// Name and Author are what `uci` reports.
const (
	Name   = "Arbiter"
	Author = "the Arbiter authors"
)

// Server is one UCI session.
type Server struct {
	eng Engine
	out *lineWriter

	pos      engine.Position
	history  []uint64 // keys of the positions before pos in the game
	chess960 bool
	// evalOptions are the evaluation's options as set (UseNNUE, EvalFile):
	// bench searches with them, as Stockfish's bench uses the loaded net,
	// so a net's bench signature can be checked through UCI.
	evalOptions map[string]string

	cancel context.CancelFunc // of the running search, nil when idle
	// finished is closed when the search has its result, just before the
	// bestmove line is written; printed is closed after it. A GUI may send
	// the next command as soon as it reads bestmove, so "searching" must
	// already be false then.
	finished, printed chan struct{}
}

type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
	l.w.WriteByte('\n')
	l.w.Flush()
}

// NewServer returns a session for eng writing to out.
func NewServer(eng Engine, out io.Writer) *Server {
	s := &Server{eng: eng, out: &lineWriter{w: bufio.NewWriter(out)}, pos: engine.StartPosition()}
	eng.SetInfoHandler(s.printInfo)
	return s
}

// Run reads commands from in until quit or end of input. A search still
// running at the end is stopped (its bestmove is printed).
func (s *Server) Run(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24) // long `position ... moves` lines
	for sc.Scan() {
		if !s.Handle(sc.Text()) {
			break
		}
	}
	s.stopSearch()
	return sc.Err()
}

// Handle executes one command line and reports whether the session goes on.
// A malformed command is answered with `info string` and ignored; nothing a
// GUI sends can panic the engine.
func (s *Server) Handle(line string) (more bool) {
	defer func() {
		if r := recover(); r != nil {
			s.out.printf("info string error: internal failure on %q: %v", line, r)
			s.out.printf("info string %s", strings.ReplaceAll(string(debug.Stack()), "\n", " | "))
			more = true
		}
	}()
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return true
	}
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case "uci":
		s.cmdUCI()
	case "isready":
		s.out.printf("readyok")
	case "setoption":
		s.cmdSetOption(line)
	case "ucinewgame":
		s.stopSearch()
		s.eng.NewGame()
	case "position":
		s.cmdPosition(args)
	case "go":
		s.cmdGo(args)
	case "stop":
		s.stopSearch()
	case "ponderhit":
		s.eng.PonderHit()
	case "quit":
		s.stopSearch()
		return false
	case "bench":
		s.cmdBench(args)
	case "d":
		s.out.printf("info string fen %s", s.pos.FEN())
	case "debug", "register":
		// accepted and ignored, as the protocol allows
	default:
		s.errorf("unknown command %q", cmd)
	}
	return true
}

func (s *Server) errorf(format string, args ...any) {
	s.out.printf("info string error: "+format, args...)
}

func (s *Server) searching() bool {
	if s.finished == nil {
		return false
	}
	select {
	case <-s.finished:
		return false
	default:
		return true
	}
}

func (s *Server) cmdUCI() {
	s.out.printf("id name %s", Name)
	s.out.printf("id author %s", Author)
	for _, o := range s.eng.Options() {
		switch o.Type {
		case "spin":
			s.out.printf("option name %s type spin default %s min %d max %d", o.Name, o.Default, o.Min, o.Max)
		case "check":
			s.out.printf("option name %s type check default %s", o.Name, o.Default)
		case "button":
			s.out.printf("option name %s type button", o.Name)
		case "string":
			def := o.Default
			if def == "" {
				def = "<empty>"
			}
			s.out.printf("option name %s type string default %s", o.Name, def)
		}
	}
	s.out.printf("uciok")
}

// cmdSetOption parses "setoption name <id> [value <x>]"; names may contain
// spaces ("Move Overhead", "Clear Hash").
func (s *Server) cmdSetOption(line string) {
	if s.searching() {
		s.errorf("setoption ignored while searching")
		return
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "setoption"))
	if !strings.HasPrefix(rest, "name ") {
		s.errorf("setoption: want 'setoption name <id> [value <x>]'")
		return
	}
	rest = strings.TrimSpace(rest[len("name "):])
	name, value := rest, ""
	if i := strings.Index(rest, " value "); i >= 0 {
		name, value = strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+len(" value "):])
	} else if strings.HasSuffix(rest, " value") {
		name = strings.TrimSpace(strings.TrimSuffix(rest, " value"))
	}
	if err := s.eng.SetOption(name, value); err != nil {
		s.errorf("%v", err)
		return
	}
	if t, ok := s.eng.(tablebaseReporter); ok && strings.EqualFold(name, search.OptSyzygyPath) {
		if found := t.TablebaseSummary(); found != "" {
			s.out.printf("info string %s", found)
		}
	}
	if strings.EqualFold(name, search.OptChess960) {
		s.chess960 = strings.EqualFold(value, "true")
		s.pos.SetChess960(s.chess960 || s.pos.IsChess960())
	}
	for _, o := range []string{search.OptUseNNUE, search.OptEvalFile} {
		if strings.EqualFold(name, o) {
			if s.evalOptions == nil {
				s.evalOptions = map[string]string{}
			}
			s.evalOptions[o] = value
		}
	}
}

// cmdPosition parses "position startpos|fen <fen> [moves m1 m2 ...]". On any
// error the previous position is kept.
func (s *Server) cmdPosition(args []string) {
	if s.searching() {
		s.errorf("position ignored while searching")
		return
	}
	if len(args) == 0 {
		s.errorf("position: want startpos or fen")
		return
	}
	var pos engine.Position
	var rest []string
	switch args[0] {
	case "startpos":
		pos = engine.StartPosition()
		rest = args[1:]
	case "fen":
		i := 1
		for i < len(args) && args[i] != "moves" {
			i++
		}
		p, err := engine.ParseFEN(strings.Join(args[1:i], " "))
		if err != nil {
			s.errorf("position: %v", err)
			return
		}
		pos, rest = p, args[i:]
	default:
		s.errorf("position: want startpos or fen, got %q", args[0])
		return
	}
	if s.chess960 {
		pos.SetChess960(true)
	}
	var history []uint64
	if len(rest) > 0 {
		if rest[0] != "moves" {
			s.errorf("position: unexpected %q (want moves)", rest[0])
			return
		}
		for _, mv := range rest[1:] {
			m, err := pos.ParseUCIMove(mv)
			if err != nil {
				s.errorf("position: %v", err)
				return
			}
			history = append(history, pos.Key())
			pos.MakeMove(m)
		}
	}
	s.pos, s.history = pos, history
}

var goKeywords = map[string]bool{
	"searchmoves": true, "ponder": true, "wtime": true, "btime": true, "winc": true, "binc": true,
	"movestogo": true, "depth": true, "nodes": true, "mate": true, "movetime": true, "infinite": true, "perft": true,
}

// parseGo reads the arguments of `go` into limits; perft > 0 asks for perft.
func parseGo(args []string, pos *engine.Position) (lim search.Limits, perft int, err error) {
	num := func(i int) (int64, error) {
		if i+1 >= len(args) {
			return 0, fmt.Errorf("go %s: missing value", args[i])
		}
		v, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("go %s: %q is not an integer", args[i], args[i+1])
		}
		return v, nil
	}
	ms := func(v int64) time.Duration {
		// Clocks can be negative when a GUI lets an engine overstep; treat as
		// 0. Cap absurd values (a year) so the Duration cannot overflow.
		return time.Duration(min(max(v, 0), 365*24*3600*1000)) * time.Millisecond
	}
	for i := 0; i < len(args); i++ {
		var v int64
		switch args[i] {
		case "infinite":
			lim.Infinite = true
			continue
		case "ponder":
			lim.Ponder = true
			continue
		case "searchmoves":
			// Moves up to the next keyword; an illegal one is an error.
			for i+1 < len(args) && !goKeywords[args[i+1]] {
				m, err := pos.ParseUCIMove(args[i+1])
				if err != nil {
					return lim, 0, fmt.Errorf("go searchmoves: %v", err)
				}
				lim.SearchMoves = append(lim.SearchMoves, m)
				i++
			}
			continue
		case "depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "perft", "mate":
			if v, err = num(i); err != nil {
				return lim, 0, err
			}
		default:
			return lim, 0, fmt.Errorf("go: unknown token %q", args[i])
		}
		switch args[i] {
		case "depth":
			lim.Depth = int(min(max(v, 1), search.MaxPly-1))
		case "mate":
			lim.Depth = int(min(max(2*v, 1), search.MaxPly-1))
		case "nodes":
			lim.Nodes = max(v, 1)
		case "movetime":
			lim.MoveTime = max(ms(v), time.Millisecond)
		case "wtime":
			lim.Time[engine.White], lim.TimeSet = ms(v), true
		case "btime":
			lim.Time[engine.Black], lim.TimeSet = ms(v), true
		case "winc":
			lim.Inc[engine.White] = ms(v)
		case "binc":
			lim.Inc[engine.Black] = ms(v)
		case "movestogo":
			lim.MovesToGo = int(max(v, 0))
		case "perft":
			if v < 1 || v > engine.MaxPerftDepth {
				return lim, 0, fmt.Errorf("go perft %d: want a depth in 1..%d", v, engine.MaxPerftDepth)
			}
			perft = int(v)
		}
		i++
	}
	return lim, perft, nil
}

func (s *Server) cmdGo(args []string) {
	if s.searching() {
		s.errorf("go ignored: already searching")
		return
	}
	lim, perft, err := parseGo(args, &s.pos)
	if err != nil {
		s.errorf("%v", err)
		return
	}
	s.stopSearch() // the last search has finished: wait for its bestmove line
	if perft > 0 {
		s.perft(perft)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	pos := s.pos
	run := s.eng.Start(ctx, pos, s.history, lim)
	finished, printed := make(chan struct{}), make(chan struct{})
	s.cancel, s.finished, s.printed = cancel, finished, printed
	go func() {
		defer close(printed)
		m, info := run.Wait()
		if info.TBError != nil {
			s.errorf("%v (the search went on without that table)", info.TBError)
		}
		close(finished)
		if m == engine.NullMove {
			s.out.printf("bestmove (none)")
			return
		}
		if len(info.PV) >= 2 && info.PV[0] == m {
			c := pos
			c.MakeMove(m)
			if c.IsLegal(info.PV[1]) {
				s.out.printf("bestmove %s ponder %s", pos.UCIMove(m), c.UCIMove(info.PV[1]))
				return
			}
		}
		s.out.printf("bestmove %s", pos.UCIMove(m))
	}()
}

// stopSearch stops a running search and waits for its bestmove line.
func (s *Server) stopSearch() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.printed
	s.cancel = nil
}

// printInfo writes one `info` line; it runs on the search goroutine and
// reads only its argument and the position, which cannot change while a
// search runs.
func (s *Server) printInfo(i search.Info) {
	var b strings.Builder
	fmt.Fprintf(&b, "info depth %d seldepth %d", i.Depth, i.SelDepth)
	if i.Mate != 0 {
		fmt.Fprintf(&b, " score mate %d", i.Mate)
	} else {
		fmt.Fprintf(&b, " score cp %d", i.Score)
	}
	fmt.Fprintf(&b, " nodes %d nps %d hashfull %d tbhits %d time %d", i.Nodes, i.NPS, i.Hashfull, i.TBHits, i.Time.Milliseconds())
	if len(i.PV) > 0 {
		b.WriteString(" pv")
		p := s.pos
		for _, m := range i.PV {
			if !p.IsLegal(m) { // a PV is rebuilt from the search stack; stop at anything odd
				break
			}
			b.WriteByte(' ')
			b.WriteString(p.UCIMove(m))
			p.MakeMove(m)
		}
	}
	s.out.printf("%s", b.String())
}

// perft prints divide in Stockfish's format.
func (s *Server) perft(depth int) {
	res, err := engine.RunPerft(context.Background(), s.pos, depth, engine.PerftOptions{})
	if err != nil {
		s.errorf("perft: %v", err)
		return
	}
	for _, d := range res.Divide {
		s.out.printf("%s: %s", d.UCI, d.Nodes)
	}
	s.out.printf("")
	s.out.printf("Nodes searched: %s", res.Nodes)
	s.out.printf("")
}

func (s *Server) cmdBench(args []string) {
	if s.searching() {
		s.errorf("bench ignored while searching")
		return
	}
	depth := search.BenchDepth
	if len(args) > 0 {
		d, err := strconv.Atoi(args[0])
		if err != nil || d < 1 || d > 40 {
			s.errorf("bench: depth %q: want an integer in 1..40", args[0])
			return
		}
		depth = d
	}
	res, err := search.BenchWith(depth, s.evalOptions, nil)
	if err != nil {
		s.errorf("bench: %v", err)
		return
	}
	for _, line := range res.Report() {
		s.out.printf("%s", line)
	}
}
