package verify

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// LoadEPD reads a perft suite ("FEN ;D1 n ;D2 n ..." per line; blank lines
// and lines starting with '#' are skipped) into targets at depth. A line's
// "Ddepth" count becomes the Target's Expected; a line without one is
// counted by Arbiter instead. name prefixes the IDs ("suite.epd:12").
func LoadEPD(r io.Reader, name string, depth int, chess960 bool) ([]Target, error) {
	var out []Target
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		e, err := engine.ParsePerftEPD(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		t := Target{ID: fmt.Sprintf("%s:%d", name, n), FEN: e.Position.FEN(), Depth: depth, Chess960: chess960 || e.Position.IsChess960()}
		for _, x := range e.Expected {
			if x.Depth == depth {
				c := x.Nodes
				t.Expected = &c
			}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no positions", name)
	}
	return out, nil
}
