package netloop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func goodFlags() Flags {
	return Flags{Dir: "d", Engine: "name=dev,builtin", Generations: 2, Positions: 2000, Each: "nodes=300",
		Train: "epochs=2,batch=256", TrainOn: "new", SPRT: "elo0=-50,elo1=50", GamesCap: 24, Seed: 1, Concurrency: 1, Threads: 1}
}

// TestCheckRefusesBadFlags: every bad flag is refused with a message that
// names it and says what is wrong; the good flags (the control) pass.
func TestCheckRefusesBadFlags(t *testing.T) {
	if _, err := goodFlags().Check(); err != nil {
		t.Fatalf("good flags refused: %v", err)
	}
	withBook := goodFlags()
	withBook.Openings = "file=../../books/uho-200.epd,order=random,seed=3"
	if _, err := withBook.Check(); err != nil {
		t.Fatalf("good --openings refused: %v", err)
	}
	cases := []struct {
		change func(*Flags)
		want   string
	}{
		{func(f *Flags) { f.Dir = "" }, "--dir: required"},
		{func(f *Flags) { f.Generations = 0 }, "--generations 0: must be between 1 and 100"},
		{func(f *Flags) { f.Generations = 101 }, "--generations 101: must be between 1 and 100"},
		{func(f *Flags) { f.Positions = 0 }, "--positions 0: must be between 1 and 100000000"},
		{func(f *Flags) { f.Positions = 200_000_000 }, "--positions 200000000"},
		{func(f *Flags) { f.GamesCap = 23 }, "--games-cap 23: must be even"},
		{func(f *Flags) { f.Engine = "" }, "--engine: required"},
		{func(f *Flags) { f.Engine = "name=sf,cmd=/usr/games/stockfish" }, "not the embedded engine"},
		{func(f *Flags) { f.Engine = "name=dev,builtin,option.EvalFile=x.nnue" }, "option.EvalFile: the loop sets the engine's net itself"},
		{func(f *Flags) { f.Engine = "name=dev,builtin,nodes=5" }, "give the search limit in --each nodes=N"},
		{func(f *Flags) { f.Each = "" }, "--each: required"},
		{func(f *Flags) { f.Each = "tc=10+0.1" }, "the loop plays at fixed nodes only"},
		{func(f *Flags) { f.Each = "nodes=0" }, `--each "nodes=0"`},
		{func(f *Flags) { f.Each = "nodes=20000000" }, "nodes=20000000: must be an integer between 1 and 10000000"},
		{func(f *Flags) { f.Train = "epoch=2" }, `--train: unknown key "epoch" (known: epochs, batch`},
		{func(f *Flags) { f.Train = "epochs" }, `--train: "epochs" is not KEY=VALUE`},
		{func(f *Flags) { f.Train = "lr=fast" }, `--train: lr="fast": not a number`},
		{func(f *Flags) { f.Train = "epochs=0" }, "--train: epochs 0: must be between 1 and 100000"},
		{func(f *Flags) { f.TrainOn = "old" }, `--train-on "old": want new`},
		{func(f *Flags) { f.SPRT = "elo0=5" }, `--sprt "elo0=5"`},
		{func(f *Flags) { f.Concurrency = 0 }, "--concurrency 0"},
		{func(f *Flags) { f.Openings = "file=no-such-book.epd" }, "no-such-book.epd"},
		{func(f *Flags) { f.Openings = "file=../../books/uho-200.epd,order=sideways" }, "sideways"},
	}
	for _, c := range cases {
		f := goodFlags()
		c.change(&f)
		_, err := f.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
}

// TestPlanIsContentAddressed: the core's keys depend on the settings and
// the inputs' hashes only; H1 ships the net and the next generation starts
// from it; --train-on all trains on every generation's data.
func TestPlanIsContentAddressed(t *testing.T) {
	s, err := goodFlags().Check()
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]*Result{}
	lookup := func(k string) *Result { return done[k] }
	p := MakePlan(s, 2, "emb", "op", lookup)
	if p.Next == nil || p.Next.Kind != KindDatagen || p.Next.Gen != 1 || p.Next.Best.SHA != "emb" {
		t.Fatalf("first step: %+v", p.Next)
	}
	if again := MakePlan(s, 2, "emb", "op", lookup); again.Next.Key != p.Next.Key {
		t.Fatal("the same settings gave another key")
	}
	s2 := s
	s2.Positions++
	if MakePlan(s2, 2, "emb", "op", lookup).Next.Key == p.Next.Key {
		t.Fatal("another --positions gave the same datagen key")
	}
	// Walk a loop: gen 1 H1, gen 2 H0.
	verdicts := []string{VerdictH1, VerdictH0}
	var trainData [][]string
	for steps := 0; p.Next != nil; steps++ {
		n := p.Next
		r := &Result{Kind: n.Kind, Key: n.Key, Gen: n.Gen}
		switch n.Kind {
		case KindDatagen:
			r.DataSHA = "data" + n.Key[:20]
		case KindTrain:
			r.NetSHA = "net" + n.Key[:20]
			trainData = append(trainData, n.Data)
		case KindSPRT:
			r.SPRT = &SPRTResult{Verdict: verdicts[n.Gen-1]}
		}
		done[n.Key] = r
		p = MakePlan(s, 2, "emb", "op", lookup)
		if steps > 20 {
			t.Fatal("the plan does not end")
		}
	}
	g1, g2 := p.Generations[0], p.Generations[1]
	if !g1.Shipped() || g2.Shipped() || g2.Best.SHA != g1.Train.Result.NetSHA || p.Best != g2.Best {
		t.Fatalf("gen 1 shipped %v, gen 2 shipped %v from %+v, best %+v", g1.Shipped(), g2.Shipped(), g2.Best, p.Best)
	}
	if g2.Datagen.Best.Step != g1.Train.Key {
		t.Fatal("generation 2's data is not generated with generation 1's net")
	}
	if len(trainData[1]) != 1 {
		t.Fatalf("--train-on new: generation 2 trains on %v", trainData[1])
	}
	all := s
	all.TrainOn = "all"
	pa := MakePlan(all, 2, "emb", "op", lookup)
	if pa.Next == nil || pa.Next.Kind != KindTrain || pa.Next.Gen != 2 || len(pa.Next.Data) != 2 {
		t.Fatalf("--train-on all: next %+v", pa.Next)
	}
}

// TestOpenRefusesAnotherLoop: a directory keeps its loop's settings; a
// run with another is refused naming the setting, unless forceNew.
func TestOpenRefusesAnotherLoop(t *testing.T) {
	d := Dir(t.TempDir())
	s, _ := goodFlags().Check()
	if err := d.Open(s, 2, false); err != nil {
		t.Fatal(err)
	}
	if err := d.Open(s, 3, false); err != nil {
		t.Fatalf("the same loop with more generations: %v", err)
	}
	o := s
	o.Train.Epochs = 3
	err := d.Open(o, 2, false)
	if err == nil || !strings.Contains(err.Error(), "--train epochs: the directory's loop has 2, this run 3") || !strings.Contains(err.Error(), "--force-new") {
		t.Fatalf("other --train: %v", err)
	}
	if err := d.Open(o, 2, true); err != nil {
		t.Fatalf("--force-new: %v", err)
	}
	if got, gens, err := d.Load(); err != nil || got.Train.Epochs != 3 || gens != 2 {
		t.Fatalf("after --force-new: %+v %d %v", got.Train, gens, err)
	}
}

// TestShipOnH1: with generation 1's train and SPRT done (H1), the runner
// ships the net (DIR/best.nnue is its bytes) and generation 2's data is
// played with it: its engine loads the net from its file.
func TestShipOnH1(t *testing.T) {
	dir := t.TempDir()
	d := Dir(dir)
	f := goodFlags()
	f.Dir, f.Positions = dir, 200
	s, err := f.Check()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(s, 2, false); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &Runner{Dir: d, Settings: s, Generations: 2, Concurrency: 1, Threads: 1, Out: &out}
	ctx := context.Background()
	// Generation 1's data and net, for real.
	for range 2 {
		p, err := r.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.runStep(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Plan()
	if p.Next.Kind != KindSPRT {
		t.Fatalf("next %+v", p.Next)
	}
	// The SPRT's verdict is written as done: H1.
	os.MkdirAll(d.StepDir(p.Next.Key), 0o755)
	if err := d.finish(&Result{Kind: KindSPRT, Key: p.Next.Key, Gen: 1, SPRT: &SPRTResult{Verdict: VerdictH1}, Started: time.Now(), Finished: time.Now()}); err != nil {
		t.Fatal(err)
	}
	netPath := d.NetPath(p.Next.New)
	good, _ := os.ReadFile(netPath)
	// Stop after generation 2's data: run steps one by one.
	for {
		p, err := r.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.Next == nil || (p.Next.Gen == 2 && p.Next.Kind == KindTrain) {
			break
		}
		if err := r.runStep(ctx, p); err != nil {
			t.Fatalf("%s: %v", p.Next.Kind, err)
		}
	}
	best, err := os.ReadFile(filepath.Join(dir, "best.nnue"))
	if err != nil || !bytes.Equal(best, good) {
		t.Fatalf("best.nnue is not generation 1's net (%d bytes, %v)", len(best), err)
	}
	p, _ = r.Plan()
	g2 := p.Generations[1]
	if !p.Generations[0].Shipped() || g2.Best.Gen != 1 || g2.Datagen.Result == nil || g2.Datagen.Result.Positions != 200 {
		t.Fatalf("generation 2: %+v", g2)
	}
	if !strings.Contains(out.String(), "shipped net "+g2.Best.SHA[:12]) {
		t.Fatalf("output:\n%s", out.String())
	}
	// The engine of generation 2's data played generation 1's net: its
	// data differs from the data the embedded net gives with the same seed.
	emb := MakePlan(s, 2, EmbeddedSHA(), "x", func(string) *Result { return nil }).Next
	emb.Seed = g2.Datagen.Seed
	emb.Key = "datagen-embedded-control"
	d.begin(emb.Key)
	res := &Result{}
	if err := r.datagen(ctx, emb, res); err != nil {
		t.Fatal(err)
	}
	if res.DataSHA == g2.Datagen.Result.DataSHA {
		t.Fatal("generation 2's data is the embedded net's: the shipped net was not played")
	}
}

// TestLostOutputIsMadeAgain: a done step whose output went (a dataset
// removed, a net overwritten) is not done any more: the plan's next step
// is that step again; with its output back it is done (the control).
func TestLostOutputIsMadeAgain(t *testing.T) {
	r := tinyRunner(t, "epochs=1", 24)
	r.Out = &bytes.Buffer{}
	ctx := context.Background()
	for range 2 {
		p, _ := r.Plan()
		if err := r.runStep(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Plan()
	if p.Next.Kind != KindSPRT {
		t.Fatalf("next %s, want sprt", p.Next.Kind)
	}
	g := p.Generations[0]
	data, net := r.Dir.DataPath(g.Datagen.Key), r.Dir.NetPath(p.Next.New)
	for _, c := range []struct {
		file, want string
		change     func([]byte) []byte
	}{
		{data, KindDatagen, func(b []byte) []byte { return b[:len(b)-1] }},
		{net, KindTrain, func(b []byte) []byte { return append([]byte{b[0] + 1}, b[1:]...) }},
	} {
		good, _ := os.ReadFile(c.file)
		os.WriteFile(c.file, c.change(good), 0o644)
		if p, _ := r.Plan(); p.Next.Kind != c.want {
			t.Errorf("%s changed: next %s, want %s", filepath.Base(c.file), p.Next.Kind, c.want)
		}
		os.WriteFile(c.file, good, 0o644)
		if p, _ := r.Plan(); p.Next.Kind != KindSPRT {
			t.Errorf("%s restored: next %s, want sprt", filepath.Base(c.file), p.Next.Kind)
		}
	}
}

// TestFailedStepIsNamedAndRetried: a step that fails (training on a
// dataset whose first line was damaged, its size kept) is named with its
// generation and why, leaves no done marker, and the next run retries it.
func TestFailedStepIsNamedAndRetried(t *testing.T) {
	r := tinyRunner(t, "epochs=1", 24)
	r.Out = &bytes.Buffer{}
	ctx := context.Background()
	p, _ := r.Plan()
	if err := r.runStep(ctx, p); err != nil {
		t.Fatal(err)
	}
	data := r.Dir.DataPath(p.Next.Key)
	good, _ := os.ReadFile(data)
	bad := append([]byte("X"), good[1:]...)
	os.WriteFile(data, bad, 0o644)
	_, err := r.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "generation 1, step train (train-") || !strings.Contains(err.Error(), "data.txt:1:") ||
		!strings.Contains(err.Error(), "run the same command again to retry it") {
		t.Fatalf("a damaged dataset: %v", err)
	}
	p, _ = r.Plan()
	if p.Next.Kind != KindTrain {
		t.Fatalf("after the failure the next step is %s, want train", p.Next.Kind)
	}
	os.WriteFile(data, good, 0o644)
	p, err = r.Run(ctx)
	if err != nil || p.Next != nil || p.Generations[0].Train.Result.Attempts != 2 {
		t.Fatalf("the retry: %v, next %+v", err, p.Next)
	}
}
