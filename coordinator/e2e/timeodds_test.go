//go:build unix

package e2e

// Per-engine limits on the cluster (time odds): submitted with the CLI,
// refused at submit when an engine's own limits cannot be played (by the
// CLI and, for clients that skip it, by the coordinator), and played by
// worker processes with each engine on its own clock scaled to the worker.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// pgnClock is a "tc=B+I" of a PGN's WhiteTimeControl or BlackTimeControl
// tag, in seconds.
func pgnClock(t *testing.T, tag string) (base, inc float64) {
	t.Helper()
	m := regexp.MustCompile(`^tc=([0-9.]+)\+([0-9.]+)$`).FindStringSubmatch(tag)
	if m == nil {
		t.Fatalf("time control tag %q is not tc=B+I", tag)
	}
	base, _ = strconv.ParseFloat(m[1], 64)
	inc, _ = strconv.ParseFloat(m[2], 64)
	return base, inc
}

// sideTimes sums the thinking times of White's and Black's engine moves
// in a game's movetext ({score/depth 0.123s} after each; {book} moves and
// the closing reason carry none) and counts the moves.
func sideTimes(t *testing.T, game string, whiteFirst bool) (secs [2]float64, moves [2]int) {
	t.Helper()
	body := game[strings.Index(game, "\n\n"):]
	comments := regexp.MustCompile(`\{([^}]*)\}`).FindAllStringSubmatch(body, -1)
	timeRE := regexp.MustCompile(`(?:^| )([0-9]+(?:\.[0-9]+)?)s$`)
	side := 0
	if !whiteFirst {
		side = 1
	}
	for _, c := range comments {
		text := strings.Join(strings.Fields(c[1]), " ")
		if text == "book" {
			side ^= 1
			continue
		}
		m := timeRE.FindStringSubmatch(text)
		if m == nil {
			continue // the game's end
		}
		s, _ := strconv.ParseFloat(m[1], 64)
		secs[side] += s
		moves[side]++
		side ^= 1
	}
	return secs, moves
}

func TestClusterTimeOdds(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	conn := dial(t, addr, token)
	jobs := arbiterv1.NewJobServiceClient(conn)

	// Refusals: the CLI names the flag and the engine; the coordinator
	// names the engine's field for a client that skips the CLI's checks.
	base := append([]string{"submit", "match"}, clientArgs(addr)...)
	// Both engines keep a stall reserve of 40 increments (the engine's
	// default is 0): the test asserts no time losses at 1+0.01 on a CI
	// machine that runs every other test beside it.
	base = append(base, "--engine", "name=slow,builtin,tc=2+0.02,option.TimeIncReserve=40", "--openings", "file="+book, "--games", "4")
	for _, c := range []struct{ engine, want string }{
		{"name=fast,builtin,tc=0.01", "--engine fast: tc=0.01: a base time under 0.05 s cannot be played"},
		{"name=fast,builtin,movetime=2", "--engine fast: movetime=2: under 5 ms per move cannot be played"},
		{"name=fast,builtin,tc=1+0.01,nodes=500", `--engine fast: time control "tc=1+0.01,nodes=500": a cluster test takes exactly one of`},
		{"name=fast,builtin", "engine fast: no limit"},
	} {
		out, code := cli(t, append(base, "--engine", c.engine)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want 2 and %q in:\n%s", c.engine, code, c.want, out)
		}
	}
	clock := func(base time.Duration) *arbiterv1.TimeControl {
		return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{Base: durationpb.New(base)}}}
	}
	for _, c := range []struct {
		a, b, test *arbiterv1.TimeControl
		want       string
	}{
		{clock(2 * time.Second), clock(10 * time.Millisecond), nil, `engine_b "fast": time control: tc=0.01: a base time under 0.05 s`},
		{clock(2 * time.Second), &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(time.Millisecond)}},
			nil, `engine_b "fast": time control: movetime=1: under 5 ms`},
		{clock(2 * time.Second), nil, nil, "time control: time control missing"},
	} {
		_, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{
			EngineA:     &arbiterv1.EngineSpec{Name: "slow", Command: "embedded", TimeControl: c.a},
			EngineB:     &arbiterv1.EngineSpec{Name: "fast", Command: "embedded", TimeControl: c.b},
			TimeControl: c.test, Openings: []*arbiterv1.Opening{{}}, Games: 2,
		}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("raw spec (%s): %v", c.want, err)
		}
	}
	if n := storeTests(t, data); n != 0 {
		t.Fatalf("%d tests stored after refusals", n)
	}

	// Time odds: slow at 2+0.02, fast at 1+0.01, no --each. Each worker
	// scales both clocks by the same factor (reference / its speed).
	startWorker(t, addr, "--name", "w1")
	startWorker(t, addr, "--name", "w2")
	pgn := filepath.Join(t.TempDir(), "odds.pgn")
	out, code := cli(t, append(base, "--engine", "name=fast,builtin,tc=1+0.01,option.TimeIncReserve=40", "--batch-pairs", "1", "--wait", "--pgnout", pgn)...)
	if code != 0 || !strings.Contains(out, "Limits:     tc=2+0.02 vs tc=1+0.01 (") || !strings.Contains(out, "Games: 4,") {
		t.Fatalf("submit match --wait: exit %d:\n%s", code, out)
	}
	id := strings.Fields(out[strings.Index(out, "Test:"):])[1]
	t.Logf("time odds:\n%s", out[strings.Index(out, "Test:"):])

	js, code := cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	if code != 0 {
		t.Fatalf("status --json: %d %s", code, js)
	}
	var st struct {
		Test struct {
			TC      string `json:"tc"`
			Engines []struct {
				Name, TC string
			} `json:"engines"`
		} `json:"test"`
		Workers []struct {
			Name       string  `json:"name"`
			TimeScale  float64 `json:"time_scale"`
			Games      uint64  `json:"games"`
			TimeLosses uint64  `json:"time_losses"`
		} `json:"workers"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if st.Test.TC != "tc=2+0.02 vs tc=1+0.01" || st.Test.Engines[0].TC != "tc=2+0.02" || st.Test.Engines[1].TC != "tc=1+0.01" {
		t.Errorf("status --json limits: %s", js)
	}
	scales := map[string]float64{}
	for _, w := range st.Workers {
		if w.Games > 0 {
			scales[w.Name] = w.TimeScale
		}
		if w.TimeLosses != 0 {
			t.Errorf("worker %s: %d time losses", w.Name, w.TimeLosses)
		}
	}

	b, err := os.ReadFile(pgn)
	if err != nil {
		t.Fatal(err)
	}
	games := strings.Split(string(b), "[Event ")[1:]
	if len(games) != 4 {
		t.Fatalf("%d games in %s", len(games), pgn)
	}
	tag := func(g, name string) string {
		m := regexp.MustCompile(`\[` + name + ` "([^"]*)"\]`).FindStringSubmatch(g)
		if m == nil {
			return ""
		}
		return m[1]
	}
	for i, g := range games {
		if term := tag(g, "Termination"); term == "time forfeit" || strings.Contains(g, "loses on time") {
			t.Errorf("game %d: lost on time:\n%s", i, g)
		}
		if tag(g, "TimeControl") != "" {
			t.Errorf("game %d: one TimeControl tag for two clocks", i)
		}
		var own [2][2]float64 // [white, black][base, inc] in seconds
		own[0][0], own[0][1] = pgnClock(t, tag(g, "WhiteTimeControl"))
		own[1][0], own[1][1] = pgnClock(t, tag(g, "BlackTimeControl"))
		slowSide := 0
		if tag(g, "White") == "fast" {
			slowSide = 1
		}
		slow, fast := own[slowSide], own[1-slowSide]
		// Each engine plays its own clock, both scaled alike: slow's is
		// twice fast's, and fast's is 1+0.01 times the factor of a worker
		// that played (the PGN's Site is a host, not a worker).
		if math.Abs(slow[0]-2*fast[0]) > 1e-6 || math.Abs(slow[1]-2*fast[1]) > 1e-6 {
			t.Errorf("game %d: slow %v, fast %v: not 2:1", i, slow, fast)
		}
		matched := false
		for _, s := range scales {
			matched = matched || math.Abs(fast[0]-s) < 1e-3*s && math.Abs(fast[1]-0.01*s) < 1e-5*s
		}
		if !matched {
			t.Errorf("game %d: fast's clock %v+%v is 1+0.01 scaled by none of the workers' factors %v", i, fast[0], fast[1], scales)
		}
		// The clock comments: each side's thinking stays within its own
		// clock (base plus an increment per move), which the shorter
		// clock would not allow had both played the longer one.
		fen := tag(g, "FEN")
		whiteFirst := fen == "" || strings.Fields(fen)[1] == "w"
		secs, moves := sideTimes(t, g, whiteFirst)
		for side := range 2 {
			if moves[side] == 0 {
				continue
			}
			budget := own[side][0] + own[side][1]*float64(moves[side])
			if secs[side] > budget {
				t.Errorf("game %d: %s thought %.3f s in %d moves, over its own clock's %.3f s", i, [2]string{"White", "Black"}[side], secs[side], moves[side], budget)
			}
		}
	}
}
