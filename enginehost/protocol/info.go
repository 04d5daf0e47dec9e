package protocol

import "time"

// Bound says whether a score is exact or one side of a window.
type Bound uint8

// Score bounds (UCI "lowerbound", "upperbound").
const (
	Exact Bound = iota
	Lower
	Upper
)

// Score is from the mover's point of view: centipawns, or mate in Mate
// moves (negative: being mated) when Mate != 0.
type Score struct {
	CP    int
	Mate  int
	Bound Bound
}

// Info is what a search reported so far: ParseInfo folds each info line
// into it, a field keeping its value until a line gives it again.
type Info struct {
	Depth, SelDepth int
	// MultiPV is the line's PV number (0: not given, the main line).
	MultiPV  int
	HasScore bool
	Score    Score
	Nodes    int64
	NPS      int64
	TBHits   int64
	HashFull int           // per mille
	Time     time.Duration // as the engine reports it
	// PV is the main line as the engine wrote it, moves separated by
	// blanks; its bytes are the Info's own (reused by the next PV).
	PV []byte
}

// ParseInfo folds one UCI info line into inf. Unknown tokens and garbage
// are skipped; a line of a second PV (multipv > 1) changes nothing; the
// rest of the line after pv, string, refutation or currline is theirs.
// It reports whether the line gave the main line a PV with a move. Once
// inf.PV has room for the line's PV nothing is allocated.
func ParseInfo(line []byte, inf *Info) (newPV bool) {
	_, rest := NextField(line) // "info"
	cur := *inf
	var (
		f         []byte
		pv        []byte
		hasPV     bool
		secondary bool
	)
	for {
		f, rest = NextField(rest)
		if len(f) == 0 {
			break
		}
		switch string(f) {
		case "depth", "seldepth", "nodes", "nps", "tbhits", "hashfull", "time", "multipv":
			var v []byte
			v, rest = NextField(rest)
			if n, ok := atoi(v); ok {
				secondary = setCounter(&cur, string(f), n) || secondary
			}
		case "score":
			rest = parseScore(rest, &cur)
		case "pv":
			pv, hasPV, rest = trimBlanks(rest), true, nil
		case "string", "refutation", "currline":
			rest = nil // the rest of the line is moves or text
		}
	}
	if secondary {
		return false
	}
	if hasPV {
		cur.PV = append(inf.PV[:0], pv...)
	}
	*inf = cur
	return hasPV && len(pv) > 0
}

// FirstMove is the first move of a PV as the engine wrote it (nil when
// the PV is empty).
func FirstMove(pv []byte) []byte {
	mv, _ := NextField(pv)
	if len(mv) == 0 {
		return nil
	}
	return mv
}

// setCounter sets the numeric field named f; it reports a secondary PV.
func setCounter(inf *Info, f string, n int64) (secondary bool) {
	switch f {
	case "depth":
		inf.Depth = int(n)
	case "seldepth":
		inf.SelDepth = int(n)
	case "nodes":
		inf.Nodes = n
	case "nps":
		inf.NPS = n
	case "tbhits":
		inf.TBHits = n
	case "hashfull":
		inf.HashFull = int(n)
	case "time":
		inf.Time = time.Duration(n) * time.Millisecond
	case "multipv":
		inf.MultiPV = int(n)
		return n > 1
	}
	return false
}

// parseScore reads "cp N" or "mate N" and an optional bound after it.
func parseScore(rest []byte, inf *Info) []byte {
	var kind, v []byte
	kind, rest = NextField(rest)
	v, rest = NextField(rest)
	n, ok := atoi(v)
	if !ok {
		return rest
	}
	var s Score
	switch string(kind) {
	case "cp":
		s.CP = int(n)
	case "mate":
		if n == 0 { // "mate 0": the engine is mated; treat as being mated now
			n = -1
		}
		s.Mate = int(n)
	default:
		return rest
	}
	if b, after := NextField(rest); string(b) == "lowerbound" {
		s.Bound, rest = Lower, after
	} else if string(b) == "upperbound" {
		s.Bound, rest = Upper, after
	}
	inf.Score, inf.HasScore = s, true
	return rest
}

func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// Bestmove is the end of a UCI search.
type Bestmove struct {
	// Move is the engine's move as written; "" when it gave none
	// ("(none)", "0000", nothing).
	Move string
	// Ponder is the move it expects in reply ("" when none).
	Ponder string
}

// ParseBestmove reads "bestmove M [ponder P]".
func ParseBestmove(line []byte) Bestmove {
	mv, p := SplitBestmove(line)
	return Bestmove{Move: string(mv), Ponder: string(p)}
}

// SplitBestmove is ParseBestmove without allocating: the move and the
// ponder move as slices of line (nil when not given).
func SplitBestmove(line []byte) (move, ponder []byte) {
	_, rest := NextField(line)
	mv, rest := NextField(rest)
	switch string(mv) {
	case "", "(none)", "0000", "none":
	default:
		move = mv
	}
	if kw, rest := NextField(rest); string(kw) == "ponder" {
		if p, _ := NextField(rest); len(p) > 0 && string(p) != "(none)" && string(p) != "0000" {
			ponder = p
		}
	}
	return move, ponder
}
