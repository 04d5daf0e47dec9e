// Command perftgen writes engine/perft_gen.go, the perft core's move
// counting and generation once per side to move, from perft.go.tmpl.
//
// Run it with go generate ./engine (the directive is in engine/perft.go);
// TestGeneratedUpToDate fails when the committed file differs from what
// the template gives.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/format"
	"os"
	"text/template"
)

//go:embed perft.go.tmpl
var source string

// side is what the template sees: the side to move and its opponent, as
// the names of the engine's Color constants, and the indexes of the side's
// castling rights (towards the h-file, towards the a-file).
type side struct {
	Us, Them string
	OO, OOO  int
	// TheirOO is the other side's OO (their OOO follows it).
	TheirOO int
	// PinMoves: the legality preamble also counts the moves of pinned
	// sliders along their pin lines (pinnedMoves), as the leaf count wants.
	PinMoves bool
}

// WithPinMoves is s for the leaf count's legality preamble.
func (s side) WithPinMoves() side {
	s.PinMoves = true
	return s
}

// generate returns the formatted Go source.
func generate() ([]byte, error) {
	tmpl, err := template.New("perft.go.tmpl").Parse(source)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, []side{{Us: "White", Them: "Black", OO: 0, OOO: 1, TheirOO: 2}, {Us: "Black", Them: "White", OO: 2, OOO: 3, TheirOO: 0}}); err != nil {
		return nil, err
	}
	out, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %v\n%s", err, buf.Bytes())
	}
	return out, nil
}

func main() {
	out, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "perftgen:", err)
		os.Exit(1)
	}
	// go generate runs this in the engine directory.
	if err := os.WriteFile("perft_gen.go", out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "perftgen:", err)
		os.Exit(1)
	}
}
