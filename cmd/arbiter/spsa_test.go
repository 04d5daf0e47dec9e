package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
)

// runCmd runs `arbiter ARGS` in-process and returns its output and exit
// status.
func runCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		out.WriteString(err.Error())
	}
	return out.String(), cliexit.Code(err, 1)
}

// A local tune through the command: an update per batch, the parameters at
// the end, the tuned values in each --format, and (--verify-games) a match
// of the tuned values against the start values.
func TestTuneCommand(t *testing.T) {
	out, code := runCmd(t, "tune", "--engine", "name=dev,builtin,option.Hash=1", "--params", "from-engine:RFPMargin,FutMargin",
		"--pairs", "4", "--batch-pairs", "2", "--each", "nodes=300", "--openings", "file=../../books/uho-200.epd",
		"--format", "openbench,go", "--confirm-games", "4")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"Tune dev: 2 parameters, 4 pairs in 2 batches of 2, nodes=300, uho-200.epd, concurrency 1, seed 1\n",
		"update 1/2 (batch 0): ", "update 2/2 (batch 1): ", "Finished tune: 2 updates, 4 pairs in ",
		"\nTuned values (openbench):\nRFPMargin, int, ", "\nTuned values (go):\n", `{Name: "FutMargin", Default: `,
		"\nVerification: the tuned values against the start values\nMatch dev-tuned vs dev-start: nodes=300, uho-200.epd",
		"Results of dev-tuned vs dev-start (nodes=300, uho-200.epd):\nElo: ", "Games: 4, Wins: ", "Finished match"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, `--format: `},
		{[]string{"--pairs", "0"}, "--pairs 0"},
		{[]string{"--params", "RFPMargin,75,20,300,5"}, "--params"},
		{[]string{"--concurrency", "0"}, "--concurrency 0"},
		// The former names still work (deprecated).
		{[]string{"--verify-games", "3"}, "--confirm-games 3"},
		{[]string{"--verify-sprt", "elo0=5,elo1=0"}, "--confirm-sprt: elo0 = 5 must be below"},
	} {
		args := []string{"tune", "--engine", "name=dev,builtin", "--params", "from-engine:RFPMargin", "--pairs", "4", "--each", "nodes=300",
			"--openings", "file=../../books/uho-200.epd"}
		out, code := runCmd(t, append(args, c.args...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
	}
}

// `spsa params --format go` prints rows of our engine's own tables
// (eval.Param literals): at the start of a tune every row holds the values
// the engine's sources hold, keyed (engine/search) or positional
// (engine/eval), so a tune's export can replace them.
func TestSPSAParamsGoRowsAreTheEngines(t *testing.T) {
	out, code := runCmd(t, "spsa", "params", "--engine", "name=dev,builtin", "--format", "go")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	keyed := regexp.MustCompile(`\{Name: "(\w+)", Default: (-?\d+), Min: (-?\d+), Max: (-?\d+), Step: (\d+)\}`)
	positional := regexp.MustCompile(`\{"(\w+)", (-?\d+), (-?\d+), (-?\d+), (\d+)\}`)
	inSource := map[string]string{}
	for _, glob := range []string{"../../engine/search/*.go", "../../engine/eval/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range []*regexp.Regexp{keyed, positional} {
				for _, m := range re.FindAllStringSubmatch(string(b), -1) {
					inSource[m[1]] = strings.Join(m[2:], ",")
				}
			}
		}
	}
	rows := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "//") {
			continue
		}
		m := keyed.FindStringSubmatch(l)
		if m == nil || !strings.HasSuffix(l, "},") {
			t.Fatalf("row %q is not an eval.Param literal", l)
		}
		rows++
		if got, want := strings.Join(m[2:], ","), inSource[m[1]]; got != want {
			t.Errorf("%s: exported default,min,max,step %s; the engine's sources hold %q", m[1], got, want)
		}
	}
	if rows < 50 || rows != len(inSource) {
		t.Fatalf("%d rows exported, %d rows in the engine's sources:\n%s", rows, len(inSource), out)
	}
}
