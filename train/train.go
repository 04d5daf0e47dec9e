// Package train is `arbiter train`: it trains the embedded engine's net
// (engine/nnue's (768→N)×2→1 SCReLU architecture) on this machine's cores
// from bullet's text format, the way bullet's examples/simple.rs trains the
// same net on a GPU: loss (sigmoid(output) − target)² with target = wdl ×
// result + (1 − wdl) × sigmoid(score / scale), AdamW with weights clipped to
// ±1.98, quantised as bullet saves (QA 255, QB 64). docs/nnue.md has the
// commands.
//
// A run is deterministic for its seed and data: the validation split, the
// initial weights and each epoch's order derive from the seed, and every
// batch is cut into a fixed number of chunks whose gradients are summed in
// order, so the thread count does not change a single bit of the result.
package train

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// Config is one training run.
type Config struct {
	Epochs    int
	BatchSize int
	LR        float64 // learning rate at the start
	LRFinal   float64 // … at the end: cosine decay from LR to LRFinal over all batches
	WDL       float64 // share of the game result in the target (bullet's wdl)
	Scale     float64 // the score's sigmoid scale in centipawns (bullet's eval scale, 400)
	Val       float64 // share of the positions held out for validation
	Seed      uint64
	Threads   int
	Decay     float64 // AdamW's weight decay
}

// DefaultConfig is the recipe of the embedded default net (docs/nnue.md):
// bullet's simple example with smaller batches, for a farm's first million
// positions rather than bullet's hundreds of millions, and the search score
// alone as the target. With a quarter or more of the game result mixed in
// (wdl 0.4), the same data gave a net 375 Elo weaker at equal nodes: its
// scores grew far beyond the centipawns the search's margins expect.
func DefaultConfig() Config {
	return Config{Epochs: 20, BatchSize: 2048, LR: 0.001, LRFinal: 0.00003, WDL: 0,
		Scale: nnue.Scale, Val: 0.02, Seed: 1, Threads: 2, Decay: 0.01}
}

// Validate names the first setting that cannot train.
func (c *Config) Validate() error {
	switch {
	case c.Epochs < 1 || c.Epochs > 100000:
		return fmt.Errorf("epochs %d: must be between 1 and 100000", c.Epochs)
	case c.BatchSize < 1 || c.BatchSize > 1<<20:
		return fmt.Errorf("batch size %d: must be between 1 and 1048576", c.BatchSize)
	case !(c.LR > 0 && c.LR < 1) || !(c.LRFinal > 0 && c.LRFinal <= c.LR):
		return fmt.Errorf("learning rate %g → %g: want 0 < final ≤ start < 1", c.LR, c.LRFinal)
	case !(c.WDL >= 0 && c.WDL <= 1):
		return fmt.Errorf("wdl %g: must be between 0 and 1", c.WDL)
	case !(c.Scale >= 1 && c.Scale <= 10000):
		return fmt.Errorf("scale %g: must be between 1 and 10000", c.Scale)
	case !(c.Val >= 0 && c.Val < 1):
		return fmt.Errorf("validation share %g: must be in [0, 1)", c.Val)
	case c.Threads < 1 || c.Threads > 256:
		return fmt.Errorf("threads %d: must be between 1 and 256", c.Threads)
	case !(c.Decay >= 0 && c.Decay < 1):
		return fmt.Errorf("weight decay %g: must be in [0, 1)", c.Decay)
	}
	return nil
}

// chunks is how many parts a batch is cut into for the threads: fixed, so
// that the sum of the gradients is the same whatever the thread count.
const chunks = 8

// State is everything a checkpoint holds: the weights, the optimiser's
// moments, and where the run stands.
type State struct {
	Params params
	M, V   params
	Epoch  int    // epochs completed
	Step   uint64 // batches completed (Adam's bias correction)
	Seed   uint64
	Digest uint64 // the data's digest (Dataset.Digest)
	Count  uint64 // the data's positions
}

// NewState starts a run: initial weights from the seed.
func NewState(cfg *Config, data *Dataset) *State {
	s := &State{Seed: cfg.Seed, Digest: data.Digest, Count: uint64(len(data.Samples))}
	initParams(&s.Params, cfg.Seed)
	return s
}

// Trainer runs epochs over a dataset.
type Trainer struct {
	cfg        Config
	train, val []Sample
	grads      [chunks]*params
	out        io.Writer
}

// NewTrainer splits data into training and validation positions by the
// seed. Progress lines go to out.
func NewTrainer(cfg Config, data *Dataset, out io.Writer) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	all := append([]Sample(nil), data.Samples...)
	r := rand.New(rand.NewPCG(cfg.Seed, 0x76616c))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	nVal := int(float64(len(all)) * cfg.Val)
	if cfg.Val > 0 && nVal == 0 && len(all) > 1 {
		nVal = 1
	}
	t := &Trainer{cfg: cfg, train: all[nVal:], val: all[:nVal], out: out}
	if len(t.train) == 0 {
		return nil, fmt.Errorf("no training positions left after holding out %d for validation", nVal)
	}
	for i := range t.grads {
		t.grads[i] = new(params)
	}
	return t, nil
}

// Sizes reports the training and validation positions.
func (t *Trainer) Sizes() (train, val int) { return len(t.train), len(t.val) }

// batchesPerEpoch is ⌈train / batch⌉.
func (t *Trainer) batchesPerEpoch() int {
	return (len(t.train) + t.cfg.BatchSize - 1) / t.cfg.BatchSize
}

// lr is the cosine schedule at batch step of the whole run.
func (t *Trainer) lr(step uint64) float64 {
	total := float64(t.batchesPerEpoch() * t.cfg.Epochs)
	frac := min(float64(step)/total, 1)
	return t.cfg.LRFinal + (t.cfg.LR-t.cfg.LRFinal)*(1+math.Cos(math.Pi*frac))/2
}

// EpochResult is one epoch's report.
type EpochResult struct {
	Epoch     int
	TrainLoss float64 // mean loss of the epoch's batches
	ValLoss   float64 // mean loss on the validation positions after the epoch (NaN without any)
	LR        float64 // learning rate at the epoch's end
	Elapsed   time.Duration
}

// Epoch trains one epoch from s (s.Epoch+1) and returns its report.
func (t *Trainer) Epoch(s *State) EpochResult {
	start := time.Now()
	epoch := s.Epoch + 1
	order := make([]int32, len(t.train))
	for i := range order {
		order[i] = int32(i)
	}
	r := rand.New(rand.NewPCG(s.Seed, uint64(epoch)))
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	var sum float64
	for b := 0; b < len(order); b += t.cfg.BatchSize {
		batch := order[b:min(b+t.cfg.BatchSize, len(order))]
		sum += t.step(s, batch)
	}
	s.Epoch = epoch
	return EpochResult{Epoch: epoch, TrainLoss: sum / float64(len(order)), ValLoss: t.ValidationLoss(&s.Params),
		LR: t.lr(s.Step), Elapsed: time.Since(start)}
}

// parallel runs fn(chunk, lo, hi) over the chunks of n items on the
// configured threads.
func (t *Trainer) parallel(n int, fn func(c, lo, hi int)) {
	next := make(chan int, chunks)
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	var wg sync.WaitGroup
	for range min(t.cfg.Threads, chunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				fn(c, c*n/chunks, (c+1)*n/chunks)
			}
		}()
	}
	wg.Wait()
}

// step trains on one batch and returns the sum of its losses.
func (t *Trainer) step(s *State, batch []int32) float64 {
	wdl, scale := float32(t.cfg.WDL), float32(t.cfg.Scale)
	k := 1 / float32(len(batch))
	var losses [chunks]float64
	t.parallel(len(batch), func(c, lo, hi int) {
		g := t.grads[c]
		clear(flat(g))
		var l float64
		for _, i := range batch[lo:hi] {
			l += float64(accumulate(&s.Params, g, &t.train[i], wdl, scale, k))
		}
		losses[c] = l
	})
	g := flat(t.grads[0])
	for c := 1; c < chunks; c++ {
		for i, v := range flat(t.grads[c]) {
			g[i] += v
		}
	}
	s.Step++
	t.adamW(s, g, t.lr(s.Step-1))
	var sum float64
	for _, l := range losses {
		sum += l
	}
	return sum
}

// adamW applies one AdamW step (bias-corrected moments, decoupled weight
// decay) and clips the weights to ±weightClip.
func (t *Trainer) adamW(s *State, g []float32, lr float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(s.Step))
	c2 := 1 - math.Pow(b2, float64(s.Step))
	p, m, v := flat(&s.Params), flat(&s.M), flat(&s.V)
	lrF, decay := float32(lr), float32(1-lr*t.cfg.Decay)
	c1F, c2F := float32(1/c1), float32(1/c2)
	for i := range p {
		gi := g[i]
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		mh, vh := m[i]*c1F, v[i]*c2F
		x := p[i]*decay - lrF*mh/(float32(math.Sqrt(float64(vh)))+eps)
		p[i] = min(max(x, -weightClip), weightClip)
	}
}

// ValidationLoss is the mean loss of p on the validation positions (NaN
// without any).
func (t *Trainer) ValidationLoss(p *params) float64 {
	return t.meanLoss(p, t.val)
}

// TrainingLoss is the mean loss of p on the training positions.
func (t *Trainer) TrainingLoss(p *params) float64 {
	return t.meanLoss(p, t.train)
}

func (t *Trainer) meanLoss(p *params, set []Sample) float64 {
	if len(set) == 0 {
		return math.NaN()
	}
	wdl, scale := float32(t.cfg.WDL), float32(t.cfg.Scale)
	var sums [chunks]float64
	t.parallel(len(set), func(c, lo, hi int) {
		var l float64
		for i := lo; i < hi; i++ {
			l += float64(loss(p, &set[i], wdl, scale))
		}
		sums[c] = l
	})
	var sum float64
	for _, l := range sums {
		sum += l
	}
	return sum / float64(len(set))
}
