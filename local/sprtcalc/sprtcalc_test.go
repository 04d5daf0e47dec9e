package sprtcalc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/sprt"
)

func TestParseCounts(t *testing.T) {
	got, err := ParseCounts("--wdl", " 1, 2,3", []string{"W", "D", "L"})
	if err != nil || len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("%v, %v", got, err)
	}
	for value, want := range map[string]string{"1,2": "want 3 comma-separated counts W,D,L, got 2", "1,x,3": `D = "x" is not a whole number`,
		"1,-2,3": "D = -2 is negative", "1,2,9999999999999999": "L = 9999999999999999 is too large"} {
		if _, err := ParseCounts("--wdl", value, []string{"W", "D", "L"}); cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want bad input with %q", value, err, want)
		}
	}
}

// A replay stops at the first decision and says which lines went unused.
func TestReplayStopsAtDecision(t *testing.T) {
	p := sprt.Params{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: sprt.Normalized}
	in := `{"pentanomial":[0,0,10,10,0]}
{"pentanomial":[0,0,20,200,0]}
{"pentanomial":[0,0,30,300,0]}
`
	var out, warn bytes.Buffer
	if err := Replay(strings.NewReader(in), "seq", &out, &warn, p, 10); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last struct {
		Line  int
		Pairs int64
		State sprt.State
	}
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &last) != nil || last.Line != 2 || last.Pairs != 220 || last.State != sprt.Accepted {
		t.Fatalf("steps:\n%s", out.String())
	}
	if !strings.Contains(warn.String(), "stopped at line 2; line 3 and later are not used") {
		t.Errorf("warning %q", warn.String())
	}
	err := Replay(strings.NewReader(`{"pentanomial":[0,0,10,10,0]}`+"\n"+`{"pentanomial":[0,0,9,10,0]}`), "seq", &out, &warn, p, 10)
	if cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), "sprt: --sequence seq line 2: pentanomial count 2 went down") {
		t.Errorf("counts going down: %v", err)
	}
}
