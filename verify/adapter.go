// Package verify finds the bug in another engine's move generator: it runs
// the engine under test on a position, compares its perft (with divide)
// against Arbiter's exact counts, and on a mismatch descends through the
// differing moves until it stands on the exact position where the engine
// lists an illegal move or misses a legal one, and says why where it can.
//
// The unit of work is a Query (FEN, moves from it, depth) answered by an
// Engine with a Divide. The descent only talks to the Engine interface, so
// the same logic runs against a local process (UCI or a perftree-style
// script) or, later, against workers of the cluster that have the engine.
package verify

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// Protocols an engine under test can speak.
const (
	ProtoUCI      = "uci"      // `go perft N` with divide lines and a total
	ProtoPerftree = "perftree" // ./script DEPTH "FEN" "MOVES", as perftree calls it
)

// EngineSpec names an engine under test and how to talk to it. It is plain
// data (JSON-friendly) so that a cluster unit can carry it to a worker.
type EngineSpec struct {
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args,omitempty"`
	Proto   string   `json:"proto"`             // ProtoUCI (default) or ProtoPerftree
	Options []Option `json:"options,omitempty"` // UCI options, set in order after uciok
	Dir     string   `json:"dir,omitempty"`     // working directory (default: the current one)
}

// Option is one UCI option setting.
type Option struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// String is a short name for messages: the command's base name and args.
func (s EngineSpec) String() string {
	name := s.Cmd
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if len(s.Args) > 0 {
		name += " " + strings.Join(s.Args, " ")
	}
	return name
}

// Query is one perft question: the position reached from FEN by Moves (UCI),
// counted to Depth. Chess960 asks for Chess960 notation (UCI_Chess960).
type Query struct {
	FEN      string   `json:"fen"`
	Moves    []string `json:"moves,omitempty"`
	Depth    int      `json:"depth"`
	Chess960 bool     `json:"chess960,omitempty"`
}

func (q Query) String() string {
	s := fmt.Sprintf("depth %d on %q", q.Depth, q.FEN)
	if len(q.Moves) > 0 {
		s += " moves " + strings.Join(q.Moves, " ")
	}
	return s
}

// DivideLine is one root move as the engine printed it, with its count.
type DivideLine struct {
	Move  string
	Nodes engine.Count
}

// Divide is an engine's answer to a Query.
type Divide struct {
	Lines []DivideLine
	Total engine.Count
}

// Unit is the piece of work the cluster hands out: one engine-under-test
// query. A worker that has the engine answers it with a Divide; the descent
// (Verify) stays on the client and issues the next units from the answers.
type Unit struct {
	Engine  EngineSpec
	Query   Query
	Timeout time.Duration
}

// Engine answers perft queries with divide. Implementations: a local UCI
// process, a perftree script, and (later) the cluster.
type Engine interface {
	Divide(ctx context.Context, q Query) (Divide, error)
	Name() string
	Close() error
}

// Open starts (UCI) or checks (perftree) the engine of spec. timeout bounds
// each query (0: none); the UCI handshake gets at least 10 seconds.
func Open(ctx context.Context, spec EngineSpec, timeout time.Duration) (Engine, error) {
	switch spec.Proto {
	case ProtoPerftree:
		return openPerftree(spec, timeout)
	case ProtoUCI, "":
		return openUCI(ctx, spec, timeout)
	}
	return nil, fmt.Errorf("engine %s: unknown protocol %q", spec, spec.Proto)
}

// EngineError is a failure of the engine under test (not a move generator
// bug): it did not start, timed out, crashed or printed something we cannot
// read. It names the engine and the query.
type EngineError struct {
	Engine string `json:"engine"`
	Query  *Query `json:"query,omitempty"`
	Kind   string `json:"kind"` // "start", "timeout", "crash", "garbage", "protocol"
	Msg    string `json:"msg"`
	Stderr string `json:"stderr,omitempty"` // the end of the engine's stderr, if any
}

func (e *EngineError) Error() string {
	s := "engine " + e.Engine
	if e.Query != nil {
		s += " at " + e.Query.String()
	}
	s += ": " + e.Kind + ": " + e.Msg
	if e.Stderr != "" {
		s += " (stderr: " + e.Stderr + ")"
	}
	return s
}

var (
	// A divide line: a UCI move, an optional separator (':', '-', '='), a
	// count; anything after the count (separated by a space) is ignored.
	divideRE = regexp.MustCompile(`^\s*([a-h][1-8][a-h][1-8][nbrqNBRQ]?)\s*[:=\-]?\s*(\d+)(?:[\s,;].*)?$`)
	// A total line: "Nodes searched: N", "Nodes: N", "Total: N", "Total nodes: N".
	// ("Perft N" is left out: engines print it as a header with the depth.)
	totalRE = regexp.MustCompile(`(?i)^\s*(?:nodes\s+searched|total\s+nodes|nodes|total|leaf\s+nodes)\s*[:=]?\s*(\S+)\s*$`)
	bareRE  = regexp.MustCompile(`^\s*(\d+)\s*$`)
)

// divideParser reads an engine's perft output line by line. It accepts
// Stockfish's format and the common variants; unrelated lines (info
// strings, banners, timings) are skipped. A bare number counts as the total
// only after a blank line (the perftree convention), so that a stray number
// in a banner is not taken for it.
type divideParser struct {
	d        Divide
	sawBlank bool
	done     bool
	lines    int
}

// maxOutputLines bounds the output of one query: no position has more than
// 218 legal moves, so thousands of lines are garbage.
const maxOutputLines = 10000

// feed reads one line; done reports a complete answer.
func (p *divideParser) feed(line string) (done bool, err error) {
	p.lines++
	if p.lines > maxOutputLines {
		return false, fmt.Errorf("more than %d lines of output without a total", maxOutputLines)
	}
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		p.sawBlank = true
		return false, nil
	}
	if m := divideRE.FindStringSubmatch(line); m != nil {
		n, ok := engine.ParseCount(m[2])
		if !ok {
			return false, fmt.Errorf("divide line %q: count out of range", line)
		}
		p.d.Lines = append(p.d.Lines, DivideLine{Move: strings.ToLower(m[1]), Nodes: n})
		return false, nil
	}
	if m := totalRE.FindStringSubmatch(line); m != nil {
		n, ok := engine.ParseCount(m[1])
		if !ok {
			return false, fmt.Errorf("total line %q: %q is not a node count", line, m[1])
		}
		p.d.Total, p.done = n, true
		return true, nil
	}
	if m := bareRE.FindStringSubmatch(line); m != nil && p.sawBlank {
		n, ok := engine.ParseCount(m[1])
		if !ok {
			return false, fmt.Errorf("total %q out of range", line)
		}
		p.d.Total, p.done = n, true
		return true, nil
	}
	if strings.HasPrefix(line, "bestmove") {
		return false, fmt.Errorf("the engine searched instead (%q): it does not seem to support `go perft`", line)
	}
	return false, nil
}

// ParseDivideOutput reads a complete perft output (divide lines and a
// total) in any of the accepted formats.
func ParseDivideOutput(out string) (Divide, error) {
	var p divideParser
	for _, line := range strings.Split(out, "\n") {
		done, err := p.feed(line)
		if err != nil {
			return Divide{}, err
		}
		if done {
			return p.d, nil
		}
	}
	return Divide{}, fmt.Errorf("no total line (like \"Nodes searched: N\", or a blank line and the number) in %d lines of output", p.lines)
}
