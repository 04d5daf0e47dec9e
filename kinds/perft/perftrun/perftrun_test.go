package perftrun

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
)

func suiteFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.epd")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A suite passes line by line, skips what the limits exclude, and a
// wrong count fails the run (status 1) after every count has run.
func TestSuite(t *testing.T) {
	good := suiteFile(t, "# comment\n\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66 ;D3 1197 ;D4 7059\n")
	lines, err := LoadSuite(good, false)
	if err != nil || len(lines) != 1 || lines[0].Num != 3 {
		t.Fatalf("%+v, %v", lines, err)
	}
	var out bytes.Buffer
	limit := engine.CountOf(2000)
	err = RunSuite(context.Background(), lines, SuiteOptions{MaxNodes: &limit, Threads: 1, Out: &out, Stderr: &out})
	if err != nil || strings.Count(out.String(), "pass line 3") != 3 || !strings.Contains(out.String(), "3 counts checked, 0 failed, 1 skipped") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	wrong := suiteFile(t, "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 67\n")
	lines, _ = LoadSuite(wrong, false)
	out.Reset()
	var stderr bytes.Buffer
	err = RunSuite(context.Background(), lines, SuiteOptions{JSON: true, Out: &out, Stderr: &stderr})
	if cliexit.Code(err, -1) != 1 || !strings.Contains(err.Error(), "1 of 2 perft counts do not match") {
		t.Fatalf("a wrong count: %v", err)
	}
	var last struct {
		Nodes    json.Number `json:"nodes"`
		Expected json.Number `json:"expected"`
		Pass     bool        `json:"pass"`
	}
	js := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(js) != 2 || json.Unmarshal([]byte(js[1]), &last) != nil || last.Pass || last.Nodes != "66" || last.Expected != "67" {
		t.Fatalf("JSON lines:\n%s", out.String())
	}
	if !strings.Contains(stderr.String(), "2 counts checked, 1 failed") {
		t.Errorf("summary on stderr: %q", stderr.String())
	}
}

func TestLoadSuiteRefusals(t *testing.T) {
	for text, want := range map[string]string{
		"4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15\nnot a fen ;D1 3\n": "suite.epd:2:",
		"# nothing\n": "no positions",
	} {
		_, err := LoadSuite(suiteFile(t, text), false)
		if cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want bad input naming %q", text, err, want)
		}
	}
	if _, err := LoadSuite("/no/such.epd", false); cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), "--epd") {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseNodeLimit(t *testing.T) {
	for s, want := range map[string]string{"1e8": "100000000", "12345": "12345", "340282366920938463463374607431768211455": "340282366920938463463374607431768211455"} {
		if n, err := ParseNodeLimit(s); err != nil || n.String() != want {
			t.Errorf("%s: %v %v, want %s", s, n, err, want)
		}
	}
	for _, s := range []string{"x", "-1", "1e30"} {
		if _, err := ParseNodeLimit(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

func TestOne(t *testing.T) {
	res, elapsed, err := Run(context.Background(), &bytes.Buffer{}, engine.StartPosition(), 4, engine.PerftOptions{Threads: 1, Stats: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	PrintText(&out, res, elapsed, true)
	for _, want := range []string{"e2e4: 13160\n", "Checkmates:       8\n", "Nodes: 197281\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := WriteJSON(&out, engine.StartFEN, 4, res, elapsed, true); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Nodes  json.Number            `json:"nodes"`
		Divide map[string]json.Number `json:"divide"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.Nodes != "197281" || j.Divide["g1f3"] != "9748" {
		t.Errorf("JSON %v: %s", err, out.String())
	}
}
