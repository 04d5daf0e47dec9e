package jobreport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/match"
)

// Each pairing test's "pair.game" tags become the tournament's "round.game
// in round", whichever way the stream cuts its lines.
func TestRoundTagWriter(t *testing.T) {
	// Three pairings, two rounds of four games per pairing: each test has
	// four pairs, two per round.
	s, err := match.NewSchedule(3, match.RoundRobin, 0, 2, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for p := 0; p < 3; p++ {
		var in strings.Builder
		for pair := 1; pair <= 4; pair++ {
			for g := 1; g <= 2; g++ {
				fmt.Fprintf(&in, "[Event \"x\"]\n[Round \"%d.%d\"]\n[White \"a\"]\n\n1. e4 *\n\n", pair, g)
			}
		}
		var out bytes.Buffer
		w := newRoundTagWriter(&out, s, p)
		text := in.String()
		for len(text) > 0 { // cut at odd places
			n := min(len(text), 7)
			w.Write([]byte(text[:n]))
			text = text[n:]
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "[Round ") {
				got = append(got, line)
			}
		}
		if strings.Count(out.String(), "1. e4 *") != 8 || strings.Count(out.String(), "[Event ") != 8 {
			t.Fatalf("pairing %d: games lost:\n%s", p, out.String())
		}
		for r := 1; r <= 2; r++ {
			for j := 1; j <= 4; j++ {
				want = append(want, fmt.Sprintf(`[Round "%d.%d"]`, r, p*4+j))
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tags\n got %v\nwant %v", got, want)
	}
	// Anything else passes unchanged, a last line without newline too.
	var out bytes.Buffer
	w := newRoundTagWriter(&out, s, 1)
	odd := "[Round \"?\"]\n[Round \"3.7\"]\n[Round \"x.1\"]\n[Site \"1.1\"]\n[Round \"1.2\"]"
	w.Write([]byte(odd))
	w.flush()
	if want := strings.Replace(odd, `[Round "1.2"]`, `[Round "1.6"]`, 1); out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
