package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/sprt"
)

// The Fishtest reference vectors, preferably from the sprt package's copy.
var sprtVectorPaths = []string{
	filepath.Join("..", "..", "sprt", "testdata", "fishtest_vectors.json"),
	filepath.Join("..", "..", "..", "shared", "data", "sprt", "fishtest_vectors.json"),
}

type cliVectorSPRT struct {
	Model string  `json:"elo_model"`
	Elo0  float64 `json:"elo0"`
	Elo1  float64 `json:"elo1"`
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
}

func (s cliVectorSPRT) args() []string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []string{"--sprt", "elo0=" + g(s.Elo0) + ",elo1=" + g(s.Elo1) + ",alpha=" + g(s.Alpha) + ",beta=" + g(s.Beta) + ",model=" + s.Model}
}

type cliVectorNElo struct {
	NElo float64 `json:"nelo"`
}

type cliVectors struct {
	Cases []struct {
		ID    string `json:"id"`
		Input struct {
			Wins        int64         `json:"wins"`
			Losses      int64         `json:"losses"`
			Draws       int64         `json:"draws"`
			Pentanomial []int64       `json:"pentanomial"`
			SPRT        cliVectorSPRT `json:"sprt"`
		} `json:"input"`
		Expected struct {
			SPRT struct {
				LLR   float64 `json:"llr"`
				Lower float64 `json:"lower_bound"`
				Upper float64 `json:"upper_bound"`
				State string  `json:"state"`
			} `json:"sprt"`
			EloEstimate struct {
				Elo  float64    `json:"elo_logistic"`
				CI95 [2]float64 `json:"ci95"`
				LOS  float64    `json:"los"`
			} `json:"elo_estimate"`
			NElo struct {
				Trinomial   *cliVectorNElo `json:"trinomial"`
				Pentanomial *cliVectorNElo `json:"pentanomial"`
			} `json:"nelo"`
		} `json:"expected"`
	} `json:"cases"`
	Sequences []struct {
		SPRT struct {
			cliVectorSPRT
			BatchPairs int64 `json:"batch_size_pairs"`
		} `json:"sprt"`
		Steps []struct {
			Pentanomial []int64 `json:"pentanomial"`
			LLR         float64 `json:"llr"`
			O0          float64 `json:"o0"`
			O1          float64 `json:"o1"`
			State       string  `json:"state"`
		} `json:"steps"`
	} `json:"overshoot_sequences"`
}

func loadCLIVectors(t *testing.T) cliVectors {
	t.Helper()
	var raw []byte
	var err error
	for _, p := range sprtVectorPaths {
		if raw, err = os.ReadFile(p); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("reference vectors not found in %v: %v", sprtVectorPaths, err)
	}
	var v cliVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) == 0 || len(v.Sequences) == 0 || len(v.Sequences[0].Steps) == 0 {
		t.Fatal("vectors file has no cases or sequences")
	}
	return v
}

// runArbiter runs the real root command in-process.
func runArbiter(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func joinCounts(c []int64) string {
	s := make([]string, len(c))
	for i, n := range c {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ",")
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func nearElo(got, want float64) bool { return near(got, want, math.Max(1e-3, 1e-4*math.Abs(want))) }

func TestSPRTCommandMatchesVectors(t *testing.T) {
	for _, c := range loadCLIVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			in := c.Input
			args := []string{"sprt", "--json", "--wdl", joinCounts([]int64{in.Wins, in.Draws, in.Losses})}
			if in.Pentanomial != nil {
				args = append(args, "--penta", joinCounts(in.Pentanomial))
			}
			args = append(args, in.SPRT.args()...)
			stdout, _, err := runArbiter(t, "", args...)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			var got struct {
				LLR        float64    `json:"llr"`
				Lower      float64    `json:"lower_bound"`
				Upper      float64    `json:"upper_bound"`
				State      string     `json:"state"`
				Elo        float64    `json:"elo"`
				EloCI95    [2]float64 `json:"elo_ci95"`
				LOS        float64    `json:"los"`
				NElo       float64    `json:"nelo"`
				NEloCI95   []float64  `json:"nelo_ci95"`
				FixedGames *struct{}  `json:"fixed_games_elo"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("output is not one JSON object: %v\n%s", err, stdout)
			}
			if strings.Count(strings.TrimSpace(stdout), "\n") != 0 {
				t.Errorf("--json printed more than one line:\n%s", stdout)
			}
			e := c.Expected
			want := e.SPRT.State
			if want == "" {
				want = "continue"
			}
			if !near(got.LLR, e.SPRT.LLR, 1e-6) || !near(got.Lower, e.SPRT.Lower, 1e-6) || !near(got.Upper, e.SPRT.Upper, 1e-6) || got.State != want {
				t.Errorf("llr %v (%v, %v) %s, want %v (%v, %v) %s", got.LLR, got.Lower, got.Upper, got.State,
					e.SPRT.LLR, e.SPRT.Lower, e.SPRT.Upper, want)
			}
			if !nearElo(got.Elo, e.EloEstimate.Elo) || !nearElo(got.EloCI95[0], e.EloEstimate.CI95[0]) ||
				!nearElo(got.EloCI95[1], e.EloEstimate.CI95[1]) || !nearElo(got.LOS, e.EloEstimate.LOS) {
				t.Errorf("elo %v %v los %v, want %+v", got.Elo, got.EloCI95, got.LOS, e.EloEstimate)
			}
			wantN := e.NElo.Pentanomial
			if wantN == nil {
				wantN = e.NElo.Trinomial
			}
			if wantN == nil || !nearElo(got.NElo, wantN.NElo) || len(got.NEloCI95) != 2 || got.FixedGames == nil {
				t.Errorf("nelo %v %v (fixed games %v), want %+v", got.NElo, got.NEloCI95, got.FixedGames, wantN)
			}
		})
	}
}

func TestSPRTCommandText(t *testing.T) {
	stdout, _, err := runArbiter(t, "", "sprt", "--penta", "29,205,392,219,37", "--sprt", "elo0=0,elo1=2")
	if err != nil {
		t.Fatal(err)
	}
	// The deprecated flags say the same after a warning (cobra prints it
	// where the command's output goes when that is set, as here; the
	// binary prints it on stderr).
	old, _, err := runArbiter(t, "", "sprt", "--penta", "29,205,392,219,37", "--elo0", "0", "--elo1", "2")
	warning := "Flag --elo0 has been deprecated, use --sprt elo0=...\nFlag --elo1 has been deprecated, use --sprt elo1=...\n"
	if err != nil || old != warning+stdout {
		t.Errorf("--elo0 --elo1: err %v, output\n%s", err, old)
	}
	for _, want := range []string{"normalized Elo [0.00, 2.00]", "882 pairs", "Ptnml(0-2): [29, 205, 392, 219, 37]",
		"LLR       0.2474  bounds (-2.94, 2.94)  state: continue", "nElo      9.47 +/- 16.21 (95%)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

func TestSPRTCommandSequence(t *testing.T) {
	sq := loadCLIVectors(t).Sequences[0]
	var file bytes.Buffer
	for _, s := range sq.Steps {
		fmt.Fprintf(&file, "{\"pentanomial\": [%s]}\n\n", joinCounts(s.Pentanomial))
	}
	// One more line past the decision: the replay must stop before it.
	last := sq.Steps[len(sq.Steps)-1].Pentanomial
	fmt.Fprintf(&file, "{\"pentanomial\": [%d,%d,%d,%d,%d]}\n", last[0], last[1], last[2], last[3], last[4]+16)
	path := filepath.Join(t.TempDir(), "steps.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sprt", "--sequence", path, "--batch-pairs", strconv.FormatInt(sq.SPRT.BatchPairs, 10)}, sq.SPRT.args()...)
	stdout, stderr, err := runArbiter(t, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(sq.Steps) {
		t.Fatalf("%d output lines for %d steps", len(lines), len(sq.Steps))
	}
	for k, line := range lines {
		var got struct {
			Line  int     `json:"line"`
			LLR   float64 `json:"llr"`
			O0    float64 `json:"o0"`
			O1    float64 `json:"o1"`
			State string  `json:"state"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("step %d: %v: %s", k, err, line)
		}
		want := sq.Steps[k]
		state := want.State
		if state == "" {
			state = "continue"
		}
		if got.Line != 2*k+1 || !near(got.LLR, want.LLR, 1e-6) || !near(got.O0, want.O0, 1e-6) || !near(got.O1, want.O1, 1e-6) || got.State != state {
			t.Fatalf("step %d: %s, want line %d llr %v o0 %v o1 %v %s", k, line, 2*k+1, want.LLR, want.O0, want.O1, state)
		}
	}
	if !strings.Contains(stderr, "not used") {
		t.Errorf("lines after the decision were dropped silently; stderr %q", stderr)
	}

	// Standard input works the same way.
	head := strings.Join(strings.SplitN(file.String(), "\n", 5)[:4], "\n")
	args[2] = "-"
	stdout, _, err = runArbiter(t, head, args...)
	if err != nil || strings.Count(stdout, "\n") != 2 {
		t.Errorf("stdin replay: %v\n%s", err, stdout)
	}
}

func TestSPRTCommandRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badJSON := write("bad.jsonl", "{\"pentanomial\": [0,1,2,1,0]}\n{\"pentanomial\": [0,1,2,1,\n")
	fourBuckets := write("four.jsonl", "{\"pentanomial\": [0,1,2,1]}\n")
	down := write("down.jsonl", "{\"pentanomial\": [0,1,2,1,0]}\n{\"pentanomial\": [0,1,1,1,0]}\n")
	negative := write("neg.jsonl", "{\"pentanomial\": [0,1,2,-1,0]}\n")
	empty := write("empty.jsonl", "\n\n")
	noCounts := write("nocounts.jsonl", "{\"llr\": 1}\n")
	partialWDL := write("partial.jsonl", "{\"wins\": 1, \"draws\": 2}\n")
	fractional := write("frac.jsonl", "{\"pentanomial\": [0,1,2.5,1,0]}\n")
	elo := []string{"--sprt", "elo0=0,elo1=2"}
	cases := []struct {
		args []string
		want string
	}{
		{elo, "--penta"},
		{append([]string{"--wdl", "1,2"}, elo...), "want 3 comma-separated counts"},
		{append([]string{"--wdl", "1,2,3,4"}, elo...), "got 4"},
		{append([]string{"--wdl", "1,x,3"}, elo...), `D = "x" is not a whole number`},
		{append([]string{"--penta", "1,2,3,4,-5"}, elo...), "WW = -5 is negative"},
		{append([]string{"--penta", "1,2,3,4,5.5"}, elo...), "not a whole number"},
		{append([]string{"--penta", "1,2,3,4,99999999999999999"}, elo...), "too large"},
		{append([]string{"--penta", "1,2,3,4,5", "--wdl", "1,2,3"}, elo...), "disagree"},
		{[]string{"--penta", "1,2,3,4,5", "--sprt", "elo0=0,elo1=2,model=bayeselo"}, "BayesElo model needs W/D/L"},
		{[]string{"--wdl", "1,2,3"}, "sprt: --sprt is required (elo0=E0,elo1=E1"},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo1=2"}, "--sprt: give both elo0= and elo1="},
		{[]string{"--wdl", "1,2,3", "--elo1", "2"}, "--sprt: give both elo0= and elo1="},
		{[]string{"--wdl", "1,2,3", "--elo0", "2"}, "--sprt: give both elo0= and elo1="},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=2,elo1=2"}, "elo0 = 2 must be below elo1 = 2"},
		{[]string{"--wdl", "1,2,3", "--elo0", "3", "--elo1", "2"}, "must be below"},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=0,elo1=2,alpha=0"}, "alpha = 0 is not in (0, 1)"},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=0,elo1=2,beta=1"}, "beta = 1 is not in (0, 1)"},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=0,elo1=2,alpha=nan"}, "alpha"},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=0,elo1=2,model=gauss"}, `unknown Elo model "gauss"`},
		{append([]string{"--wdl", "1,2,3", "--model", "gauss"}, "--elo0", "0", "--elo1", "2"), `unknown Elo model "gauss"`},
		{[]string{"--wdl", "1,2,3", "--sprt", "elo0=0,elo1=2,gamma=3"}, "gamma"},
		{append([]string{"--wdl", "1,2,3", "--elo1", "3"}, elo...), "--elo1: give the bounds once, in --sprt"},
		{[]string{"--wdl", "1,2,3", "--elo0", "0,elo1=4", "--elo1", "2"}, "--elo0 \"0,elo1=4\": want one value"},
		{append([]string{"--wdl", "1,2,3", "--batch-pairs", "4"}, elo...), "only applies with --sequence"},
		{append([]string{"--sequence", filepath.Join(dir, "missing.jsonl"), "--batch-pairs", "4"}, elo...), "missing.jsonl"},
		{append([]string{"--sequence", badJSON, "--batch-pairs", "4"}, elo...), "line 2: not a JSON results object"},
		{append([]string{"--sequence", fourBuckets, "--batch-pairs", "4"}, elo...), "line 1: pentanomial has 4 counts"},
		{append([]string{"--sequence", down, "--batch-pairs", "4"}, elo...), "line 2: pentanomial count 2 went down"},
		{append([]string{"--sequence", negative, "--batch-pairs", "4"}, elo...), "line 1: pentanomial count 3 = -1"},
		{append([]string{"--sequence", empty, "--batch-pairs", "4"}, elo...), "no results lines"},
		{append([]string{"--sequence", noCounts, "--batch-pairs", "4"}, elo...), "line 1: no counts"},
		{append([]string{"--sequence", partialWDL, "--batch-pairs", "4"}, elo...), "line 1: give all of wins, draws and losses"},
		{append([]string{"--sequence", fractional, "--batch-pairs", "4"}, elo...), "line 1: not a JSON results object"},
		{append([]string{"--sequence", down}, elo...), "needs --batch-pairs"},
		{append([]string{"--sequence", down, "--batch-pairs", "0"}, elo...), "--batch-pairs 0: must be at least 1"},
		{append([]string{"--sequence", down, "--batch-pairs", "4", "--penta", "1,2,3,4,5"}, elo...), "cannot be combined"},
	}
	for _, c := range cases {
		args := append([]string{"sprt"}, c.args...)
		stdout, _, err := runArbiter(t, "", args...)
		if err == nil || carriedCode(err) != 2 {
			t.Errorf("%v: err %v, want a usage error (exit 2)", c.args, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q lacks %q", c.args, err, c.want)
		}
		if stdout = deprecationWarnings.ReplaceAllString(stdout, ""); stdout != "" && !strings.Contains(c.want, "line 2") {
			t.Errorf("%v: printed %q before failing", c.args, stdout)
		}
	}
}

// TestSPRTBinary runs the compiled command as a user would: the test binary
// re-executes itself as arbiter (see TestHelperArbiterMain), so main's exit
// status and stderr are checked without a separate build.
var deprecationWarnings = regexp.MustCompile(`(?m)^Flag --\S+ has been deprecated.*\n`)

func TestSPRTBinary(t *testing.T) {
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
		cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			code = xe.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}
	stdout, stderr, code := run("sprt", "--penta", "0,1,2,1,0", "--sprt", "elo0=0,elo1=2", "--json")
	var obj map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &obj) != nil || obj["state"] != "continue" {
		t.Errorf("good input: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A deprecated flag warns on stderr and leaves the JSON on stdout intact.
	stdout, stderr, code = run("sprt", "--penta", "0,1,2,1,0", "--elo0", "0", "--elo1", "2", "--json")
	if code != 0 || json.Unmarshal([]byte(stdout), &obj) != nil || !strings.Contains(stderr, "--elo0 has been deprecated") {
		t.Errorf("deprecated flags: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	_, stderr, code = run("sprt", "--wdl", "1,2,-3", "--sprt", "elo0=0,elo1=2")
	if code != 2 || !strings.HasPrefix(stderr, "arbiter: sprt: --wdl") {
		t.Errorf("bad input: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run("sprt", "--no-such-flag")
	if code != 2 || stderr == "" {
		t.Errorf("unknown flag: exit %d, stderr %q", code, stderr)
	}
}

// TestHelperArbiterMain is not a test: it is the arbiter process that
// TestSPRTBinary starts, and does nothing in a normal run.
func TestHelperArbiterMain(t *testing.T) {
	if os.Getenv("ARBITER_TEST_MAIN") != "1" {
		return
	}
	for i, a := range os.Args {
		if a == "--" {
			os.Args = append([]string{"arbiter"}, os.Args[i+1:]...)
			break
		}
	}
	main()
	os.Exit(0)
}

func TestSPRTCommandSequenceWDL(t *testing.T) {
	lines := "{\"wins\": 1, \"draws\": 0, \"losses\": 0}\n{\"wins\": 1, \"draws\": 1, \"losses\": 0}\n"
	stdout, _, err := runArbiter(t, lines, "sprt", "--sequence", "-", "--batch-pairs", "1", "--sprt", "elo0=0,elo1=5,model=logistic")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(out) != 2 {
		t.Fatalf("want 2 steps, got:\n%s", stdout)
	}
	for k, ldw := range [][]int64{{0, 0, 1}, {0, 1, 1}} {
		var got struct {
			Games int64   `json:"games"`
			LLR   float64 `json:"llr"`
		}
		if err := json.Unmarshal([]byte(out[k]), &got); err != nil {
			t.Fatal(err)
		}
		want, err := sprt.LLRLogistic(0, 5, ldw)
		if err != nil {
			t.Fatal(err)
		}
		if got.Games != int64(k+1) || got.LLR != want {
			t.Errorf("step %d: %s, want games %d llr %v", k, out[k], k+1, want)
		}
	}
}
