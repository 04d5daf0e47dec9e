// Command brokenperft is a perft engine with move generator bugs put in on
// purpose, for the tests of package verify. It is package engine's correct
// generator with moves filtered out or pseudo-legal moves added, so each
// bug is exactly the one named:
//
//	none                  no bug (a clean run must find nothing)
//	ep                    e.p. captures without the legality test: allows the
//	                      capture that exposes the king along the rank
//	castle-through-check  castles although the king passes an attacked square
//	underpromo            generates only queen promotions
//	960-king-stays        Chess960: no castling when the king does not move
//	960-rook-dest         Chess960: requires the rook's destination to be empty
//	                      even when the king itself stands there
//	castle-out-of-check   castles while in check
//
// Several bugs: -bug a,b. Failure modes for the adapters' tests:
// -fail crash|hang|garbage|search makes `go perft` misbehave (at the
// -fail-at-th query, default 1; with -fail-once FILE only the first
// process fails, so that a restart can be tested).
//
// It speaks UCI (`go perft N`, divide lines in -format colon|space|dash,
// and a total "Nodes searched: N"), or with -perftree acts as a perftree
// script: brokenperft -bug X -perftree DEPTH "FEN" "MOVES".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

var bugs = map[string]bool{}

// options are the command's flags.
type options struct {
	bug, fail, failOnce, format, total string
	failAt                             int
	perftree                           bool
}

func main() {
	var o options
	flag.StringVar(&o.bug, "bug", "none", "comma-separated bugs (see the package doc)")
	flag.StringVar(&o.fail, "fail", "", "crash, hang, garbage or search on go perft")
	flag.IntVar(&o.failAt, "fail-at", 1, "the query (1-based) at which -fail strikes")
	flag.StringVar(&o.failOnce, "fail-once", "", "fail only if this file does not exist yet (and create it): a restarted engine then works")
	flag.StringVar(&o.format, "format", "colon", "divide line format: colon (e2e4: 20), space (e2e4 20), dash (e2e4 - 20)")
	flag.StringVar(&o.total, "total", "Nodes searched", "label of the total line")
	flag.BoolVar(&o.perftree, "perftree", false, "act as a perftree script: DEPTH FEN [MOVES] as arguments")
	flag.Parse()
	if o.failOnce != "" && o.fail != "" {
		if _, err := os.Stat(o.failOnce); err == nil {
			o.fail = ""
		} else {
			os.WriteFile(o.failOnce, nil, 0o644)
		}
	}
	for _, b := range strings.Split(o.bug, ",") {
		switch b {
		case "none", "":
		case "ep", "castle-through-check", "underpromo", "960-king-stays", "960-rook-dest", "castle-out-of-check":
			bugs[b] = true
		default:
			fmt.Fprintf(os.Stderr, "brokenperft: unknown bug %q\n", b)
			os.Exit(2)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if o.perftree {
		perftreeScript(out, o, flag.Args())
		return
	}
	uciLoop(out, o)
}

// perftreeScript answers one perftree query: DEPTH FEN [MOVES].
func perftreeScript(out *bufio.Writer, o options, a []string) {
	if len(a) < 2 {
		fmt.Fprintln(os.Stderr, "usage: brokenperft -perftree DEPTH FEN [MOVES]")
		os.Exit(2)
	}
	depth, err := strconv.Atoi(a[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "brokenperft: bad depth", a[0])
		os.Exit(2)
	}
	moves := ""
	if len(a) > 2 {
		moves = a[2]
	}
	pos, err := setPosition(a[1], strings.Fields(moves), false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "brokenperft:", err)
		os.Exit(1)
	}
	switch o.fail {
	case "crash":
		fmt.Fprintln(os.Stderr, "brokenperft: crashing as asked")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Fprintln(out, "this is not perft output")
		return
	}
	lines, n := divide(pos, depth)
	for _, l := range lines {
		fmt.Fprintf(out, "%s %d\n", l.mv, l.n)
	}
	fmt.Fprintf(out, "\n%d\n", n)
}

// uciLoop speaks UCI on standard input and output until quit or EOF.
func uciLoop(out *bufio.Writer, o options) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	pos := engine.StartPosition()
	chess960 := false
	queries := 0
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "uci":
			say("id name BrokenPerft %s", o.bug)
			say("id author Arbiter tests")
			say("option name UCI_Chess960 type check default false")
			say("uciok")
		case "isready":
			say("readyok")
		case "setoption":
			if len(f) >= 5 && f[2] == "UCI_Chess960" {
				chess960 = f[4] == "true"
			}
		case "position":
			p, err := uciPosition(f, chess960)
			if err != nil {
				say("info string error: %v", err)
				continue
			}
			pos = p
		case "go":
			if len(f) < 3 || f[1] != "perft" {
				say("bestmove 0000")
				continue
			}
			queries++
			if queries == o.failAt && failQuery(say, o.fail) {
				continue
			}
			goPerft(say, o, pos, f[2])
		case "quit":
			return
		}
	}
}

// uciPosition is the position a "position" command's words f set.
func uciPosition(f []string, chess960 bool) (engine.Position, error) {
	var fen string
	var moves []string
	i := 1
	if len(f) > 1 && f[1] == "startpos" {
		fen, i = engine.StartFEN, 2
	} else if len(f) > 1 && f[1] == "fen" {
		j := 2
		for j < len(f) && f[j] != "moves" {
			j++
		}
		fen, i = strings.Join(f[2:j], " "), j
	}
	if i < len(f) && f[i] == "moves" {
		moves = f[i+1:]
	}
	return setPosition(fen, moves, chess960)
}

// failQuery misbehaves as -fail asks on a "go perft" query; true when the
// query is answered (badly) and no count follows.
func failQuery(say func(string, ...any), fail string) bool {
	switch fail {
	case "crash":
		say("e2e4: 1")
		fmt.Fprintln(os.Stderr, "brokenperft: crashing as asked")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "garbage":
		say("a2a3: 1")
		say("Nodes searched: lots")
		return true
	case "search":
		say("info depth 1 score cp 0")
		say("bestmove e2e4")
		return true
	}
	return false
}

// goPerft answers "go perft DEPTH": the divide in -format and the total.
func goPerft(say func(string, ...any), o options, pos engine.Position, depthWord string) {
	depth, err := strconv.Atoi(depthWord)
	if err != nil || depth < 1 {
		say("info string bad depth")
		return
	}
	say("info string perft of %s", pos.FEN())
	lines, n := divide(pos, depth)
	for _, l := range lines {
		switch o.format {
		case "space":
			say("%s %d", l.mv, l.n)
		case "dash":
			say("%s - %d", l.mv, l.n)
		default:
			say("%s: %d", l.mv, l.n)
		}
	}
	say("")
	say("%s: %d", o.total, n)
}

// setPosition plays moves (matched against our buggy move list, as an
// engine would) from fen.
func setPosition(fen string, moves []string, chess960 bool) (engine.Position, error) {
	p, err := engine.ParseFEN(fen)
	if err != nil {
		return p, err
	}
	if chess960 {
		p.SetChess960(true)
	}
	for _, s := range moves {
		found := false
		for _, m := range generate(&p) {
			if p.UCIMove(m) == s {
				p.MakeMove(m)
				found = true
				break
			}
		}
		if !found {
			return p, fmt.Errorf("move %s: not in the move list of %s", s, p.FEN())
		}
	}
	return p, nil
}

type line struct {
	mv string
	n  uint64
}

func divide(p engine.Position, depth int) ([]line, uint64) {
	var out []line
	var total uint64
	for _, m := range generate(&p) {
		c := p
		c.MakeMove(m)
		n := perft(&c, depth-1)
		out = append(out, line{p.UCIMove(m), n})
		total += n
	}
	sort.Slice(out, func(i, j int) bool { return out[i].mv < out[j].mv })
	return out, total
}

func perft(p *engine.Position, depth int) uint64 {
	if depth == 0 {
		return 1
	}
	ms := generate(p)
	if depth == 1 {
		return uint64(len(ms))
	}
	var n uint64
	for _, m := range ms {
		c := *p
		c.MakeMove(m)
		n += perft(&c, depth-1)
	}
	return n
}

// The move kind bits (14-15 of engine.Move, as its doc describes) of an
// e.p. capture and of castling, read off moves of known positions so that
// this program builds the illegal moves the bugs need without depending on
// the engine's unexported constants.
var epKind, castleKind engine.Move

func init() {
	p, _ := engine.ParseFEN("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
	m, err := p.ParseUCIMove("e5d6")
	if err != nil || !m.IsEnPassant() {
		panic("brokenperft: cannot find the e.p. move kind")
	}
	epKind = m & 0xC000
	p, _ = engine.ParseFEN("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
	m, err = p.ParseUCIMove("e1g1")
	if err != nil || !m.IsCastle() {
		panic("brokenperft: cannot find the castling move kind")
	}
	castleKind = m & 0xC000
}

func has(ms []engine.Move, m engine.Move) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// generate is the buggy move generator.
func generate(p *engine.Position) []engine.Move {
	legal := p.LegalMoves()
	us := p.SideToMove()
	var out []engine.Move
	for _, m := range legal {
		switch {
		case bugs["underpromo"] && m.IsPromotion() && m.Promotion() != engine.Queen:
			continue
		case bugs["960-king-stays"] && m.IsCastle() && p.IsChess960() && m.From() == kingTo(us, m):
			continue
		case bugs["960-rook-dest"] && m.IsCastle() && p.IsChess960() && rookTo(us, m) == m.From():
			continue
		}
		out = append(out, m)
	}
	if bugs["ep"] {
		if ep := p.EnPassant(); ep != engine.NoSquare {
			for b := engine.PawnAttacks(us.Other(), ep) & p.Pieces(us, engine.Pawn); b != 0; b &= b - 1 {
				m := engine.Move(b.First()) | engine.Move(ep)<<6 | epKind
				if !has(out, m) {
					out = append(out, m)
				}
			}
		}
	}
	if bugs["castle-through-check"] || bugs["castle-out-of-check"] {
		out = append(out, extraCastles(p, out)...)
	}
	// Illegal positions (after an added move) could offer a king capture;
	// an engine never generates those, and playing one would break the
	// position's invariants.
	if k := p.KingSquare(us.Other()); k != engine.NoSquare {
		j := 0
		for _, m := range out {
			if m.To() != k || m.IsCastle() {
				out[j] = m
				j++
			}
		}
		out = out[:j]
	}
	return out
}

func kingTo(us engine.Color, m engine.Move) engine.Square {
	back := 0
	if us == engine.Black {
		back = 7
	}
	if m.To() > m.From() {
		return engine.MakeSquare(6, back)
	}
	return engine.MakeSquare(2, back)
}

func rookTo(us engine.Color, m engine.Move) engine.Square {
	back := 0
	if us == engine.Black {
		back = 7
	}
	if m.To() > m.From() {
		return engine.MakeSquare(5, back)
	}
	return engine.MakeSquare(3, back)
}

// extraCastles returns castling moves the legal generator refused that a
// buggy one allows: through attacked squares (the king's destination is
// still tested) and, with castle-out-of-check, out of check.
func extraCastles(p *engine.Position, have []engine.Move) []engine.Move {
	us := p.SideToMove()
	if p.InCheck() && !bugs["castle-out-of-check"] {
		return nil
	}
	back := 0
	if us == engine.Black {
		back = 7
	}
	ksq := p.KingSquare(us)
	var out []engine.Move
	for _, rsq := range castleRookSquares(p, us) {
		m := engine.Move(ksq) | engine.Move(rsq)<<6 | castleKind
		if has(have, m) {
			continue
		}
		kt, rt := kingTo(us, m), rookTo(us, m)
		occ := p.Occupied() &^ (ksq.Bit() | rsq.Bit())
		need := span(ksq, kt, back) | span(rsq, rt, back)
		if occ&need != 0 {
			continue
		}
		c := *p
		c.MakeMove(m)
		if c.AttackedBy(kt, us.Other()) {
			continue // into check: not this bug
		}
		if !bugs["castle-through-check"] && !p.InCheck() {
			continue
		}
		out = append(out, m)
	}
	return out
}

func span(a, b engine.Square, back int) engine.Bitboard {
	lo, hi := a.File(), b.File()
	if lo > hi {
		lo, hi = hi, lo
	}
	var bb engine.Bitboard
	for f := lo; f <= hi; f++ {
		bb |= engine.MakeSquare(f, back).Bit()
	}
	return bb
}

// castleRookSquares reads the rooks of the side's castling rights from the
// Shredder-FEN castling field (the engine keeps them unexported).
func castleRookSquares(p *engine.Position, us engine.Color) []engine.Square {
	c := *p
	c.SetChess960(true)
	f := strings.Fields(c.FEN())
	var out []engine.Square
	for _, ch := range f[2] {
		switch {
		case us == engine.White && ch >= 'A' && ch <= 'H':
			out = append(out, engine.MakeSquare(int(ch-'A'), 0))
		case us == engine.Black && ch >= 'a' && ch <= 'h':
			out = append(out, engine.MakeSquare(int(ch-'a'), 7))
		}
	}
	return out
}
