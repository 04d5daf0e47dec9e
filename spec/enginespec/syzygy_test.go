package enginespec

import (
	"strings"
	"testing"
)

// syzygy=N has the builtin engine probe the playing machine's tables up
// to N pieces; it survives String, MatchEngine and the wire, and every
// misuse is refused naming it.
func TestSyzygyPieces(t *testing.T) {
	for _, use := range []Use{Match, LocalMatch} {
		s, err := Parse("name=dev,builtin,syzygy=5", use)
		if err != nil || s.SyzygyPieces != 5 {
			t.Fatalf("%v: %+v, %v", use, s, err)
		}
		back, err := Parse(s.String(), use)
		if err != nil || back.SyzygyPieces != 5 {
			t.Fatalf("String %q parses to %+v, %v", s.String(), back, err)
		}
		e, err := s.MatchEngine(Spec{})
		if err != nil || e.SyzygyPieces != 5 {
			t.Fatalf("MatchEngine %+v, %v", e, err)
		}
		if p := s.ToProto(); p.GetSyzygyPieces() != 5 || FromProto(p).SyzygyPieces != 5 {
			t.Fatalf("wire %v", p)
		}
	}
	for _, c := range []struct {
		use  Use
		in   string
		want string
	}{
		{Match, "name=dev,builtin,syzygy=2", `syzygy="2": want the most pieces the engine probes, 3 to 7`},
		{Match, "name=dev,builtin,syzygy=8", `syzygy="8": want`},
		{Match, "name=dev,builtin,syzygy=five", `syzygy="five": want`},
		{Match, "name=dev,builtin,syzygy=4,syzygy=4", "syzygy= given twice"},
		{Match, "name=sf,cmd=stockfish,syzygy=5", "syzygy= goes with builtin"},
		{LocalMatch, "name=dev,builtin,syzygy=5,option.SyzygyPath=/tb", "option.SyzygyPath and syzygy= exclude each other"},
		{Match, "name=dev,builtin,syzygy=5,option.SyzygyProbeLimit=3", "option.SyzygyProbeLimit and syzygy= exclude each other"},
		{Each, "syzygy=5", "syzygy= is for the builtin engine of a match or test"},
		{Verify, "cmd=./dev,syzygy=5", "syzygy= is for the builtin engine of a match or test"},
	} {
		_, err := Parse(c.in, c.use)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.in, err, c.want)
		}
	}
}
