package syzygy

import (
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// materialKey is an exact material signature: a 4-bit count for each
// colour and piece type from pawn to queen (kings are always one each).
// Unlike a hash it cannot collide, so the table found is the table meant.
type materialKey uint64

func materialShift(c engine.Color, t engine.PieceType) uint {
	return (uint(c)*5 + uint(t-engine.Pawn)) * 4
}

// material counts pieces by colour (index 0 white) and type (1..6).
type material [2][7]int

func (m *material) key() materialKey {
	var k materialKey
	for c := engine.White; c <= engine.Black; c++ {
		for t := engine.Pawn; t <= engine.Queen; t++ {
			k |= materialKey(m[c][t]) << materialShift(c, t)
		}
	}
	return k
}

// mirrored swaps the colours.
func (m *material) mirrored() material { return material{m[1], m[0]} }

func (m *material) pieces() int {
	n := 0
	for c := range m {
		for _, k := range m[c] {
			n += k
		}
	}
	return n
}

// name is the table name of m with White's pieces first, such as "KQRvKR".
func (m *material) name() string {
	var b strings.Builder
	for c := engine.White; c <= engine.Black; c++ {
		if c == engine.Black {
			b.WriteByte('v')
		}
		for t := engine.King; t >= engine.Pawn; t-- {
			for range m[c][t] {
				b.WriteByte(engine.MakePiece(engine.White, t).Letter())
			}
		}
	}
	return b.String()
}

// positionMaterial counts the pieces of pos.
func positionMaterial(pos *engine.Position) material {
	var m material
	for c := engine.White; c <= engine.Black; c++ {
		for t := engine.Pawn; t <= engine.King; t++ {
			m[c][t] = pos.Pieces(c, t).Count()
		}
	}
	return m
}

// parseTableName reads a table name such as "KBBvKN": each side one king
// and at most 15 of any other type, written king first and then queens,
// rooks, bishops, knights, pawns (the generator's spelling).
func parseTableName(name string) (material, error) {
	var m material
	sides := strings.Split(name, "v")
	if len(sides) != 2 {
		return m, fmt.Errorf("table name %q: want two sides separated by one 'v'", name)
	}
	const order = "KQRBNP"
	for c, side := range sides {
		if !strings.HasPrefix(side, "K") {
			return m, fmt.Errorf("table name %q: side %q does not start with its king", name, side)
		}
		last := 0
		for i := 0; i < len(side); i++ {
			at := strings.IndexByte(order, side[i])
			if at < 0 {
				return m, fmt.Errorf("table name %q: %q is not a piece letter (KQRBNP)", name, side[i])
			}
			if at < last || (i > 0 && at == 0) {
				return m, fmt.Errorf("table name %q: side %q is not in the order KQRBNP", name, side)
			}
			last = at
			t := [...]engine.PieceType{engine.King, engine.Queen, engine.Rook, engine.Bishop, engine.Knight, engine.Pawn}[at]
			m[c][t]++
			if m[c][t] > 15 {
				return m, fmt.Errorf("table name %q: more than 15 of one piece", name)
			}
		}
	}
	return m, nil
}
