package verifyrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/verify"
)

func TestTargets(t *testing.T) {
	epd := filepath.Join(t.TempDir(), "s.epd")
	os.WriteFile(epd, []byte("4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66\n"), 0o644)
	ts, err := Positions{FEN: "8/8/8/8/8/8/8/K6k w - - 0 1", EPD: epd, Random: 3, Seed: 1, Depth: 2}.Targets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 5 || ts[0].ID != "fen" || ts[1].Expected == nil || ts[1].Expected.String() != "66" {
		t.Fatalf("targets %+v", ts)
	}
	ts, err = Positions{Depth: 3}.Targets()
	if err != nil || len(ts) != 1 || ts[0].ID != "startpos" || ts[0].FEN != engine.StartFEN || ts[0].Depth != 3 {
		t.Fatalf("default: %+v, %v", ts, err)
	}
	for _, p := range []Positions{{FEN: "nonsense"}, {EPD: "/no/such.epd"}} {
		if _, err := p.Targets(); cliexit.Code(err, -1) != 2 {
			t.Errorf("%+v: %v, want bad input", p, err)
		}
	}
}

const stockfish = "/usr/games/stockfish"

// Stockfish's move generator is right: positions verified two at a time
// all come out ok, reports in target order, the summary says so.
func TestRunParallelStockfish(t *testing.T) {
	if _, err := os.Stat(stockfish); err != nil {
		t.Skip("stockfish not installed (apt-get install stockfish)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eng, err := verify.Open(ctx, verify.EngineSpec{Cmd: stockfish}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	targets, _ := Positions{Random: 4, Seed: 7, Depth: 3}.Targets()
	var out bytes.Buffer
	res := Run(ctx, Config{Engine: eng, Targets: targets, Depth: 3, Parallel: 2, Out: &out, Options: verify.Options{Threads: 1}})
	if err := res.Err(ctx); err != nil || res.Summary.OK != 4 || res.Summary.Positions != 4 {
		t.Fatalf("%v, summary %+v\n%s", err, res.Summary, out.String())
	}
	for i, r := range res.Reports {
		if r.ID != targets[i].ID {
			t.Errorf("report %d is %s, want %s", i, r.ID, targets[i].ID)
		}
	}
	if n := strings.Count(out.String(), "ok    "); n != 4 {
		t.Errorf("%d position lines, want 4:\n%s", n, out.String())
	}
	var js bytes.Buffer
	if err := res.Print(&js, true, map[string]int{"units": 0}); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Summary   Summary         `json:"summary"`
		Cluster   map[string]int  `json:"cluster"`
		Positions []verify.Report `json:"positions"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil || parsed.Summary.OK != 4 || parsed.Cluster == nil || len(parsed.Positions) != 4 {
		t.Errorf("JSON %v: %s", err, js.String())
	}
	js.Reset()
	res.Print(&js, true, nil)
	if strings.Contains(js.String(), `"cluster"`) {
		t.Errorf("a local run's JSON names a cluster: %s", js.String())
	}
}

// A refusal stops the run: positions still running are dropped, and
// none starts after it.
func TestRunStopsOnRefusal(t *testing.T) {
	targets, _ := Positions{Random: 6, Seed: 1, Depth: 2}.Targets()
	refused := errors.New("refused")
	res := Run(context.Background(), Config{Engine: refusingEngine{}, Targets: targets, Depth: 2, Parallel: 2, Out: &bytes.Buffer{},
		Refused: func() error { return refused }})
	if len(res.Reports) != 0 {
		t.Fatalf("%d reports after a refusal", len(res.Reports))
	}
}

// refusingEngine is a coordinator that refuses every query.
type refusingEngine struct{}

func (refusingEngine) Divide(context.Context, verify.Query) (verify.Divide, error) {
	return verify.Divide{}, errors.New("refused")
}
func (refusingEngine) Name() string { return "refusing" }
func (refusingEngine) Close() error { return nil }
