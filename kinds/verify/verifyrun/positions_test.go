package verifyrun

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
)

// --random-variant chooses the starts of the random walks: standard only,
// Chess960 only, or mixed (the default, the same positions per seed as
// before the flag); a bad value or one that contradicts --chess960 is bad
// input naming the flag.
func TestRandomVariant(t *testing.T) {
	count := func(variant string) (std, c960 int) {
		ts, err := Positions{Depth: 2, Random: 60, Seed: 7, RandomVariant: variant}.Targets()
		if err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		for _, tg := range ts {
			if tg.Chess960 {
				c960++
			} else {
				std++
			}
		}
		return
	}
	if std, c960 := count("standard"); std != 60 || c960 != 0 {
		t.Errorf("standard: %d standard, %d Chess960", std, c960)
	}
	if std, c960 := count("960"); std != 0 || c960 != 60 {
		t.Errorf("960: %d standard, %d Chess960", std, c960)
	}
	if std, c960 := count("mixed"); std == 0 || c960 == 0 {
		t.Errorf("mixed: %d standard, %d Chess960", std, c960)
	}
	a, _ := Positions{Depth: 2, Random: 20, Seed: 7}.Targets()
	b, _ := Positions{Depth: 2, Random: 20, Seed: 7, RandomVariant: "mixed"}.Targets()
	for i := range a {
		if a[i].FEN != b[i].FEN {
			t.Fatalf("mixed is not the default: target %d %s vs %s", i, a[i].FEN, b[i].FEN)
		}
	}
	for _, p := range []Positions{
		{Depth: 2, Random: 5, RandomVariant: "frc"},
		{Depth: 2, Random: 5, RandomVariant: "standard", Chess960: true},
	} {
		_, err := p.Targets()
		if err == nil || cliexit.Code(err, 0) != 2 || !strings.Contains(err.Error(), "--random-variant") {
			t.Errorf("%+v: %v", p, err)
		}
	}
}
