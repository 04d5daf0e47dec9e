package datagen

import (
	"bytes"
	"compress/flate"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// newBuiltin makes the embedded engine with a small hash (tests run beside
// other work).
func newBuiltin() (match.Player, error) {
	return builtin.New("dev", map[string]string{"Hash": "8"})
}

func testSettings(nodes int) Settings {
	s := DefaultSettings()
	s.Nodes = nodes
	return s
}

func TestPlayGamesDeterministic(t *testing.T) {
	s := testSettings(1000)
	ctx := context.Background()
	a, err := PlayGames(ctx, newBuiltin, s, 42, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PlayGames(ctx, newBuiltin, s, 42, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different games")
	}
	c, err := PlayGames(ctx, newBuiltin, s, 43, 4)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same games")
	}
	// A game depends on (seed, index) only, not on the batch size.
	d, err := PlayGames(ctx, newBuiltin, s, 42, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a[:2], d) {
		t.Fatal("the first games of a batch depend on its size")
	}
	// The games of a batch start differently (each its own stream).
	seen := map[string]int{}
	for i, g := range a {
		var opening []string
		for _, m := range g.Moves {
			if m.Random {
				opening = append(opening, m.UCI)
			}
		}
		key := strings.Join(opening, " ")
		if j, dup := seen[key]; dup {
			t.Fatalf("games %d and %d of a batch have the same opening %s", j, i, key)
		}
		seen[key] = i
	}
	for i, g := range a {
		n := Count(g, s.Filters)
		t.Logf("game %d: %d plies, %s (%s), %d records", i, len(g.Moves), g.Result, g.Termination, n)
	}
}

func flateReader(b []byte) io.Reader { return flate.NewReader(bytes.NewReader(b)) }

func deflate(b []byte) []byte {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}
