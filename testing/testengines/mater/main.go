// Command mater is a UCI engine for the tests of fastchess's
// -check-mate-pvs (local/fastchesscli). At every go it plays a move that
// mates at once when there is one, else the first legal move, and first
// writes one info line:
//
//	info depth 1 score mate 1 nodes 1 pv MOVE    a mate, its PV complete
//	info depth 1 score cp 0 nodes 1 pv MOVE      no mate
//
// With -short it claims mate in 2 for the mating move (a PV of one ply
// where a mate in 2 needs three: incomplete); with -long the mate-in-1
// line carries a second move after the mate that is not there, as a PV
// of two plies (too long, and continuing after checkmate).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

func main() {
	short := flag.Bool("short", false, "claim mate in 2 with a one-ply PV")
	long := flag.Bool("long", false, "add a move after the mate to the PV")
	flag.Parse()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	pos := engine.StartPosition()
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "uci":
			say("id name Mater")
			say("id author Arbiter tests")
			say("uciok")
		case "isready":
			say("readyok")
		case "position":
			p, err := position(f[1:])
			if err != nil {
				say("info string %v", err)
				continue
			}
			pos = p
		case "go":
			think(&pos, say, *short, *long)
		case "quit":
			return
		}
	}
}

// position reads "startpos|fen F... [moves M...]".
func position(f []string) (engine.Position, error) {
	pos := engine.StartPosition()
	i := 1
	if len(f) > 0 && f[0] == "fen" {
		for i < len(f) && f[i] != "moves" {
			i++
		}
		var err error
		if pos, err = engine.ParseFEN(strings.Join(f[1:i], " ")); err != nil {
			return pos, err
		}
	}
	for _, s := range f[min(i+1, len(f)):] {
		m, err := pos.ParseUCIMove(s)
		if err != nil {
			return pos, err
		}
		pos.MakeMove(m)
	}
	return pos, nil
}

func think(pos *engine.Position, say func(string, ...any), short, long bool) {
	moves := pos.LegalMoves()
	if len(moves) == 0 {
		say("bestmove (none)")
		return
	}
	for _, m := range moves {
		next := *pos
		next.MakeMove(m)
		if !next.IsCheckmate() {
			continue
		}
		mv := pos.UCIMove(m)
		switch {
		case short:
			say("info depth 1 score mate 2 nodes 1 pv %s", mv)
		case long:
			say("info depth 1 score mate 1 nodes 1 pv %s %s", mv, mv)
		default:
			say("info depth 1 score mate 1 nodes 1 pv %s", mv)
		}
		say("bestmove %s", mv)
		return
	}
	mv := pos.UCIMove(moves[0])
	say("info depth 1 score cp 0 nodes 1 pv %s", mv)
	say("bestmove %s", mv)
}
