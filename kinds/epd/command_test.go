package epd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// buildArbiter builds the real binary once per test run.
func buildArbiter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "arbiter")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/arbiter-chess/arbiter/cmd/arbiter").CombinedOutput(); err != nil {
		t.Fatalf("building arbiter: %v\n%s", err, out)
	}
	return bin
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err) // not started
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func epdSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile("../../docs/json/epd.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommandEndToEnd runs the real binary: the embedded engine and
// Stockfish (a real process) on Bratko-Kopec at nodes=5000. The --json
// output matches docs/json/epd.schema.json, holds every (engine,
// position) result, and the embedded engine's results equal a run of the
// library in this process (deterministic at fixed nodes). The text form
// prints a line per search and the table. Bad input exits with status 2
// and names what is wrong: each refused suite line by its number.
func TestCommandEndToEnd(t *testing.T) {
	needStockfish(t)
	bin := buildArbiter(t)
	args := []string{"epd", "--engine", "builtin", "--engine", "cmd=" + stockfish + ",option.Threads=1",
		"--suite", "testdata/bratko-kopec.epd", "--each", "nodes=5000", "--concurrency", "2"}
	out, stderr, code := runBinary(t, bin, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := epdSchema(t).Validate(inst); err != nil {
		t.Fatalf("--json does not match its schema: %v\n%.2000s", err, out)
	}
	var rep ReportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 48 || len(rep.Engines) != 2 || rep.Engines[0].Name != "builtin" || rep.Engines[1].Name != "stockfish" || rep.Engines[1].Searched != 24 {
		t.Fatalf("report: %d results, engines %+v", len(rep.Results), rep.Engines)
	}
	s := suite(t, "bratko-kopec.epd", 0)
	local, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{{Name: "builtin", Proto: "builtin"}},
		Limit: Limit{Nodes: 5000}, Builtin: builtin.New})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range local {
		got := rep.Results[2*i]
		if got.Engine != "builtin" || got.ID != s.Positions[i].ID || got.Move != r.Move || got.Solved != r.Solved || got.Nodes != r.Nodes || got.Depth != r.Depth {
			t.Errorf("%s: binary %+v, library %+v", s.Positions[i].ID, got, r)
		}
	}

	text, stderr, code := runBinary(t, bin, args...)
	if code != 0 || strings.Count(text, "\nBK.") != 48 || !strings.Contains(text, "\nstockfish  ") || !strings.Contains(text, "engine        solved") {
		t.Errorf("text output (exit %d):\n%s\n%s", code, text, stderr)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"epd", "--engine", "builtin", "--suite", "testdata/kaufman.epd", "--each", "nodes=10"},
			[]string{"6 line(s) refused", "testdata/kaufman.epd:3: am \"Ne5\": ambiguous", "testdata/kaufman.epd:15: the position is not legal"}},
		{[]string{"epd", "--engine", "builtin", "--suite", "testdata/wac.epd", "--each", "nodes=0"}, []string{"--each nodes=\"0\": want a whole number"}},
		{[]string{"epd", "--engine", "builtin", "--suite", "testdata/wac.epd", "--each", "tc=10+0.1"}, []string{"unknown limit \"tc\""}},
		{[]string{"epd", "--engine", "builtin,nodes=5", "--suite", "testdata/wac.epd", "--each", "nodes=10"}, []string{"nodes= is a limit"}},
		{[]string{"epd", "--engine", "builtin", "--suite", "testdata/missing.epd", "--each", "nodes=10"}, []string{"--suite", "missing.epd"}},
		{[]string{"epd", "--suite", "testdata/wac.epd", "--each", "nodes=10"}, []string{"--engine: give at least one"}},
	} {
		_, stderr, code := runBinary(t, bin, c.args...)
		for _, w := range c.want {
			if code != 2 || !strings.Contains(stderr, w) {
				t.Errorf("%v: exit %d, want 2 and %q in\n%s", c.args, code, w, stderr)
			}
		}
	}
	if _, err := os.Stat("testdata/missing.epd"); err == nil {
		t.Fatal("testdata/missing.epd exists")
	}
}
