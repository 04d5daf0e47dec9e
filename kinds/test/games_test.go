package test

import (
	"strings"
	"testing"
)

// A PGN as workers write it replays ply by ply: tags, a FEN start, move
// numbers, comments, NAGs and variations; a move that does not replay is
// named with its ply.
func TestParsePGN(t *testing.T) {
	g, err := parsePGN(`[Event "t"]
[White "a"]
[Black "b"]
[Result "1-0"]
[FEN "4k3/8/8/8/8/8/8/R3K3 w Q - 0 40"]
[SetUp "1"]

40. O-O-O {+1.20/9 0.10s} Kf7 $1 (40... Kd7 41. Rd1+) 41. Rd7+ {book}
Ke6 1-0
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Plies) != 4 || g.Result != "1-0" || g.Tag("White") != "a" {
		t.Fatalf("game: %+v", g)
	}
	want := []string{"O-O-O", "Kf7", "Rd7+", "Ke6"}
	for i, p := range g.Plies {
		if p.SAN != want[i] {
			t.Fatalf("ply %d: %s, want %s", i+1, p.SAN, want[i])
		}
	}
	if g.Plies[0].UCI != "e1c1" || g.Plies[0].Comment != "+1.20/9 0.10s" || g.Plies[0].Move != 40 || !g.Plies[0].White {
		t.Fatalf("first ply: %+v", g.Plies[0])
	}
	if g.Plies[2].Move != 41 || g.Plies[2].Comment != "book" {
		t.Fatalf("third ply: %+v", g.Plies[2])
	}
	if rows := moveRows(g.Plies); len(rows) != 2 || rows[1].Black.SAN != "Ke6" {
		t.Fatalf("rows: %+v", rows)
	}
	if _, err := parsePGN("[Event \"t\"]\n\n1. e4 e5 2. Ke3 *\n"); err == nil || !strings.Contains(err.Error(), `ply 3: move "Ke3"`) {
		t.Fatalf("illegal move: %v", err)
	}
	if _, err := parsePGN("[Event t]\n\n1. e4 *\n"); err == nil {
		t.Fatal("bad tag accepted")
	}
	// Black to move first.
	g, err = parsePGN("[FEN \"4k3/8/8/8/8/8/8/4K3 b - - 0 1\"]\n\n1... Kd7 2. Kd2 *\n")
	if err != nil || len(moveRows(g.Plies)) != 2 || moveRows(g.Plies)[0].White != nil {
		t.Fatalf("black first: %+v %v", g, err)
	}
}
