// Command badengine is a UCI engine for the match runner's tests that
// misbehaves on command. It plays a pseudo-random legal move (seeded by the
// position, so games are reproducible), and at the FailAt-th `go` of each
// game (1-based; 0 = never) it does what Mode says:
//
//	crash       exit at once (status 3)
//	hang        stop reading and writing, forever
//	stall       print info lines, never a bestmove, keep reading input
//	nobestmove  answer "bestmove (none)" in a position with legal moves
//	empty       answer "bestmove" with no move
//	illegal     answer an illegal move (a1a1, or a king move onto its own piece)
//	garbage     print garbage and an over-long line, then a legal move
//	slow        sleep SlowMs before the bestmove
//	noscore     answer a legal move with no info line (no score)
//	manynodes   report a billion nodes searched, then a legal move
//	mate        when a move mates at once, play it and claim it:
//	            "score mate 1 ... pv MOVE" (a complete mating PV)
//	shortmate   the same claimed as "score mate 2 ... pv MOVE" (a PV
//	            short of the mate in 2 it claims)
//	longmate    the same claimed as "score mate 1 ... pv MOVE MOVE" (a PV
//	            that goes on after the mate)
//	claimmate   claim "score mate 1 ... pv MOVE" for its usual move
//
// (mate, shortmate and longmate play as usual where no move mates at once.)
//
// Options: Mode (combo), FailAt (spin), SlowMs (spin). The flags -mode,
// -at, -slow set the same at start; -startup-hang never answers `uci`;
// -first plays the first legal move (in generation order) instead of the
// pseudo-random one: a baseline any engine beats, whose games stay legal.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

func main() {
	mode := flag.String("mode", "none", "misbehaviour")
	at := flag.Int("at", 0, "go number in each game at which to misbehave")
	slow := flag.Int("slow", 100, "milliseconds of delay for mode slow")
	startupHang := flag.Bool("startup-hang", false, "never answer uci")
	first := flag.Bool("first", false, "play the first legal move rather than a pseudo-random one")
	flag.Parse()

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	pos := engine.StartPosition()
	goCount := 0
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "uci":
			if *startupHang {
				time.Sleep(1 << 62)
			}
			say("id name BadEngine")
			say("id author Arbiter tests")
			say("option name Mode type combo default none var none var crash var hang var stall var nobestmove var empty var illegal var garbage var slow var noscore var manynodes var mate var shortmate var longmate var claimmate")
			say("option name FailAt type spin default 0 min 0 max 1000")
			say("option name SlowMs type spin default 100 min 0 max 100000")
			say("option name UCI_Chess960 type check default false")
			say("uciok")
		case "setoption":
			// setoption name X value V
			name, value, _ := strings.Cut(strings.TrimPrefix(line, "setoption name "), " value ")
			switch strings.ToLower(name) {
			case "mode":
				*mode = value
			case "failat":
				*at, _ = strconv.Atoi(value)
			case "slowms":
				*slow, _ = strconv.Atoi(value)
			}
		case "isready":
			say("readyok")
		case "ucinewgame":
			goCount = 0
		case "position":
			pos = setPosition(f[1:])
		case "go":
			goCount++
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				say("bestmove (none)")
				continue
			}
			m := moves[int(pos.Key()%uint64(len(moves)))]
			if *first {
				m = moves[0]
			}
			if goCount != *at {
				say("info depth 1 score cp %d nodes %d time 0 pv %s", int(pos.Key()%50)-25, len(moves), pos.UCIMove(m))
				say("bestmove %s", pos.UCIMove(m))
				continue
			}
			switch *mode {
			case "crash":
				os.Exit(3)
			case "hang":
				time.Sleep(1 << 62)
			case "stall":
				say("info depth 1 score cp 0 nodes 1")
				for in.Scan() {
					if strings.TrimSpace(in.Text()) == "quit" {
						return
					}
				}
				return
			case "nobestmove":
				say("bestmove (none)")
			case "empty":
				say("bestmove")
			case "illegal":
				say("bestmove a1a1")
			case "garbage":
				say("info depth nonsense score cp xyz nodes -")
				say("\x00\x01\xff garbage line")
				say("info score mate")
				say("info %s", strings.Repeat("x", 200000))
				say("info depth 3 score cp 17 nodes 99 pv %s", pos.UCIMove(m))
				say("bestmove %s ponder", pos.UCIMove(m))
			case "noscore":
				say("bestmove %s", pos.UCIMove(m))
			case "manynodes":
				say("info depth 1 score cp 0 nodes 1000000000 time 1 pv %s", pos.UCIMove(m))
				say("bestmove %s", pos.UCIMove(m))
			case "slow":
				time.Sleep(time.Duration(*slow) * time.Millisecond)
				say("bestmove %s", pos.UCIMove(m))
			case "claimmate":
				say("info depth 1 score mate 1 nodes 1 pv %s", pos.UCIMove(m))
				say("bestmove %s", pos.UCIMove(m))
			case "mate", "shortmate", "longmate":
				claimMate(&pos, m, *mode, say)
			default:
				say("bestmove %s", pos.UCIMove(m))
			}
		case "quit":
			return
		}
	}
}

// setPosition reads "startpos|fen F... [moves m...]"; bad input leaves the
// start position (a test engine need not be strict).
func setPosition(f []string) engine.Position {
	pos := engine.StartPosition()
	i := 0
	if len(f) > 0 && f[0] == "fen" {
		j := 1
		for j < len(f) && f[j] != "moves" {
			j++
		}
		if p, err := engine.ParseFEN(strings.Join(f[1:j], " ")); err == nil {
			pos = p
		}
		i = j
	} else {
		i = 1
	}
	if i < len(f) && f[i] == "moves" {
		for _, s := range f[i+1:] {
			m, err := pos.ParseUCIMove(s)
			if err != nil {
				break
			}
			pos.MakeMove(m)
		}
	}
	return pos
}

// claimMate plays a move that mates at once, with the mate claim of
// mode, else m.
func claimMate(pos *engine.Position, m engine.Move, mode string, say func(string, ...any)) {
	for _, c := range pos.LegalMoves() {
		next := *pos
		next.MakeMove(c)
		if !next.IsCheckmate() {
			continue
		}
		mv := pos.UCIMove(c)
		switch mode {
		case "shortmate":
			say("info depth 1 score mate 2 nodes 1 pv %s", mv)
		case "longmate":
			say("info depth 1 score mate 1 nodes 1 pv %s %s", mv, mv)
		default:
			say("info depth 1 score mate 1 nodes 1 pv %s", mv)
		}
		say("bestmove %s", mv)
		return
	}
	say("bestmove %s", pos.UCIMove(m))
}
