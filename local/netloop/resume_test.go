package netloop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// cancelOn is an Out that cancels when a line contains its mark.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	mark   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mark != "" && bytes.Contains(p, []byte(c.mark)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

func (c *cancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// tinyRunner is a one-generation loop of 300 positions in a new directory.
func tinyRunner(t *testing.T, train string, cap int) *Runner {
	t.Helper()
	dir := t.TempDir()
	f := goodFlags()
	f.Dir, f.Positions, f.Generations, f.Train, f.GamesCap = dir, 300, 1, train, cap
	s, err := f.Check()
	if err != nil {
		t.Fatal(err)
	}
	if err := Dir(dir).Open(s, 1, false); err != nil {
		t.Fatal(err)
	}
	return &Runner{Dir: Dir(dir), Settings: s, Generations: 1, Concurrency: 1, Threads: 1}
}

// TestTrainingResumesFromItsLastEpoch: a training stopped after its first
// epoch resumes from that epoch's checkpoint on the next run (it says so)
// and writes the same net as a training never stopped.
func TestTrainingResumesFromItsLastEpoch(t *testing.T) {
	whole := tinyRunner(t, "epochs=3,batch=64", 24)
	var out bytes.Buffer
	whole.Out = &out
	whole.Generations = 1
	ctx := context.Background()
	runUntil := func(r *Runner, ctx context.Context, kind string) (Plan, error) {
		for {
			p, err := r.Plan()
			if err != nil || p.Next == nil || p.Next.Kind == kind {
				return p, err
			}
			if err := r.runStep(ctx, p); err != nil {
				return p, err
			}
		}
	}
	if _, err := runUntil(whole, ctx, KindSPRT); err != nil {
		t.Fatal(err)
	}
	want, _ := whole.Plan()

	stopped := tinyRunner(t, "epochs=3,batch=64", 24)
	cctx, cancel := context.WithCancel(ctx)
	c := &cancelOn{mark: "epoch 1/3", cancel: cancel}
	stopped.Out = c
	if _, err := runUntil(stopped, cctx, KindSPRT); err == nil || !strings.Contains(err.Error(), "context canceled") && !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("stopped training: %v", err)
	}
	c.mark = ""
	p, err := runUntil(stopped, ctx, KindSPRT)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "training resumes after epoch 1") {
		t.Fatalf("no resume:\n%s", c.String())
	}
	got, wantNet := p.Generations[0].Train.Result, want.Generations[0].Train.Result
	if got.NetSHA != wantNet.NetSHA || len(got.Epochs) != 3 || got.Epochs[0] != wantNet.Epochs[0] || got.Attempts != 2 {
		t.Fatalf("resumed training: net %s, epochs %v, attempts %d; never stopped: net %s, epochs %v",
			got.NetSHA[:12], got.Epochs, got.Attempts, wantNet.NetSHA[:12], wantNet.Epochs)
	}
}

// TestSPRTResumesFromItsState: an SPRT stopped after some games resumes
// from its match state on the next run and plays only the games missing:
// the games cap, not more, with the PGN holding each game once.
func TestSPRTResumesFromItsState(t *testing.T) {
	r := tinyRunner(t, "epochs=1", 40)
	// Bounds no 40 games decide: the SPRT plays to the cap.
	r.Settings.SPRT = "elo0=-3000,elo1=-1000,model=logistic"
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	c := &cancelOn{cancel: cancel}
	r.Out = c
	for {
		p, err := r.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.Next.Kind == KindSPRT {
			break
		}
		if err := r.runStep(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Plan()
	pgn := filepath.Join(r.Dir.StepDir(p.Next.Key), "games.pgn")
	// Stop the SPRT once 20 games are in its PGN.
	go func() {
		for cctx.Err() == nil {
			if b, _ := os.ReadFile(pgn); bytes.Count(b, []byte("[Result ")) >= 20 {
				cancel()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if err := r.runStep(cctx, p); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("stopped SPRT: %v", err)
	}
	cancel()
	p, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "the SPRT resumes after") || strings.Contains(c.String(), "the SPRT resumes after 0 games") {
		t.Fatalf("no resume:\n%s", c.String())
	}
	res := p.Generations[0].SPRT.Result.SPRT
	b, _ := os.ReadFile(pgn)
	if n := res.Wins + res.Draws + res.Losses; n != 40 || bytes.Count(b, []byte("[Result ")) != 40 || p.Generations[0].SPRT.Result.Attempts != 2 {
		t.Fatalf("resumed SPRT: %d games, %d in the PGN, attempts %d; want 40, 40, 2", n, bytes.Count(b, []byte("[Result ")), p.Generations[0].SPRT.Result.Attempts)
	}
}
