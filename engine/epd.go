package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// PerftExpectation is one "Dn count" operation of a perft EPD line.
type PerftExpectation struct {
	Depth int
	Nodes Count
}

// PerftEPD is a parsed perft suite line: "FEN ;D1 20 ;D2 400 ...".
type PerftEPD struct {
	FEN      string
	Position Position
	Expected []PerftExpectation // in file order
}

// ParsePerftEPD reads one perft suite line. The position part may have 4
// (EPD) or 6 (FEN) fields; each ';'-separated operation must be "Dn count"
// (a space or not between the tag and the count).
func ParsePerftEPD(line string) (PerftEPD, error) {
	parts := strings.Split(line, ";")
	fen := strings.TrimSpace(parts[0])
	pos, err := ParseFEN(fen)
	if err != nil {
		return PerftEPD{}, err
	}
	e := PerftEPD{FEN: fen, Position: pos}
	for _, op := range parts[1:] {
		op = strings.TrimSpace(op)
		if op == "" {
			continue
		}
		if len(op) < 2 || (op[0] != 'D' && op[0] != 'd') {
			return PerftEPD{}, fmt.Errorf("operation %q: expected \"Dn count\" (like \"D5 4865609\")", op)
		}
		rest := op[1:]
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		depth, err := strconv.Atoi(rest[:i])
		if err != nil || depth < 0 || depth > MaxPerftDepth {
			return PerftEPD{}, fmt.Errorf("operation %q: depth must be a number from 0 to %d", op, MaxPerftDepth)
		}
		n, ok := ParseCount(strings.TrimSpace(rest[i:]))
		if !ok {
			return PerftEPD{}, fmt.Errorf("operation %q: count %q is not a non-negative integer", op, strings.TrimSpace(rest[i:]))
		}
		e.Expected = append(e.Expected, PerftExpectation{Depth: depth, Nodes: n})
	}
	if len(e.Expected) == 0 {
		return PerftEPD{}, fmt.Errorf("no \";Dn count\" operations after the position")
	}
	return e, nil
}
