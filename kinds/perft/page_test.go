package perft

import (
	"fmt"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// The published counts the perft page checks against are the engine's own
// (checked here to depth 4; the deeper ones are the literature's).
func TestPublishedCounts(t *testing.T) {
	for fen, counts := range published {
		pos, err := engine.ParseFEN(fen)
		if err != nil {
			t.Fatalf("%s: %v", fen, err)
		}
		for d := 0; d < len(counts) && d <= 4; d++ {
			if got := fmt.Sprint(engine.Perft(&pos, d)); got != counts[d] {
				t.Errorf("%s depth %d: engine %s, table %s", fen, d, got, counts[d])
			}
		}
	}
	if n, ok := publishedPerft(engine.StartFEN, 7); !ok || n != "3195901860" {
		t.Fatalf("start position depth 7: %s %v", n, ok)
	}
	// Move counters do not matter; anything else does.
	if _, ok := publishedPerft("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 5 20", 3); !ok {
		t.Fatal("start position with other counters not recognised")
	}
	if _, ok := publishedPerft("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Kkq - 0 1", 3); ok {
		t.Fatal("other castling rights recognised as the start position")
	}
}
