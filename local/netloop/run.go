package netloop

// The runner: executes the step the core says is next, through the
// library functions of arbiter datagen, arbiter train and arbiter match.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// Runner runs a loop in its directory.
type Runner struct {
	Dir         Dir
	Settings    Settings
	Generations int
	Concurrency int // datagen batches and SPRT games at once
	Threads     int // training threads (the net does not depend on them)
	Out         io.Writer
	// Farm, when set, runs datagen and the SPRT as jobs of its
	// coordinator and ships there too (farm.go); training stays here.
	Farm *clusterclient.Client
	// openings is the SPRT's --openings and its file's SHA-256.
	openings, openingsSHA string
	// pageFailed keeps a page that cannot be written to one message.
	pageFailed bool
}

// EmbeddedSHA is the SHA-256 of the binary's embedded net ("none").
func EmbeddedSHA() string {
	b := nnue.DefaultBytes()
	if b == nil {
		return "none"
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Plan is the loop's state in its directory.
func (r *Runner) Plan() (Plan, error) {
	if r.openingsSHA == "" {
		var err error
		if r.openings, r.openingsSHA, err = r.Dir.Openings(r.Settings.Openings, r.Settings.Seed); err != nil {
			return Plan{}, err
		}
	}
	return MakePlan(r.Settings, r.Generations, EmbeddedSHA(), r.openingsSHA, r.Dir.Done), nil
}

// Run runs steps until the loop is done or one fails: the error names
// the generation and the step, and the next run retries it.
func (r *Runner) Run(ctx context.Context) (Plan, error) {
	for {
		p, err := r.Plan()
		if err != nil {
			return p, err
		}
		if p.Next == nil {
			r.writePage(p, "")
			return p, nil
		}
		err = r.runStep(ctx, p)
		if err != nil {
			if p2, perr := r.Plan(); perr == nil {
				r.writePage(p2, "") // the step shows as stopped
			}
			if ctx.Err() != nil {
				err = errors.New("interrupted")
			}
			return p, fmt.Errorf("generation %d, step %s (%s): %w; run the same command again to retry it", p.Next.Gen, p.Next.Kind, p.Next.Key[:len(p.Next.Kind)+13], err)
		}
	}
}

func (r *Runner) runStep(ctx context.Context, p Plan) error {
	s := p.Next
	n, err := r.Dir.begin(s.Key)
	if err != nil {
		return err
	}
	r.writePage(p, s.Key)
	res := &Result{Kind: s.Kind, Key: s.Key, Gen: s.Gen, Started: time.Now().UTC(), Attempts: n}
	again := ""
	if n > 1 {
		again = fmt.Sprintf(" (attempt %d)", n)
	}
	fmt.Fprintf(r.Out, "net loop: generation %d: %s%s\n", s.Gen, s.Kind, again)
	if err := r.exec(ctx, s, res); err != nil {
		return err
	}
	res.Finished = time.Now().UTC()
	return r.Dir.finish(res)
}

// exec runs step s, here or, with r.Farm, on the farm, filling in res.
func (r *Runner) exec(ctx context.Context, s *Step, res *Result) error {
	farm := r.Farm != nil
	switch {
	case s.Kind == KindDatagen && farm:
		return r.farmDatagen(ctx, s, res)
	case s.Kind == KindDatagen:
		return r.datagen(ctx, s, res)
	case s.Kind == KindTrain:
		return r.train(ctx, s, res)
	case s.Kind == KindSPRT && farm:
		return r.farmSPRT(ctx, s, res)
	case s.Kind == KindSPRT:
		return r.sprt(ctx, s, res)
	case s.Kind == KindShip && farm:
		if err := r.farmShip(ctx, s); err != nil {
			return err
		}
		return r.ship(s, res)
	case s.Kind == KindShip:
		return r.ship(s, res)
	}
	return fmt.Errorf("unknown step kind %q", s.Kind)
}

// ship makes the new net the loop's best: DIR/best.nnue and best.json.
func (r *Runner) ship(s *Step, res *Result) error {
	b, err := os.ReadFile(r.Dir.NetPath(s.New))
	if err != nil {
		return err
	}
	if got := sha(b); got != s.New.SHA {
		return fmt.Errorf("net %s: its bytes now have SHA-256 %s: changed on disk", r.Dir.NetPath(s.New), got[:12])
	}
	if err := writeAtomic(r.Dir.path("best.nnue"), b); err != nil {
		return err
	}
	j, _ := json.MarshalIndent(s.New, "", "  ")
	if err := writeAtomic(r.Dir.path("best.json"), append(j, '\n')); err != nil {
		return err
	}
	res.Shipped = s.New.SHA
	fmt.Fprintf(r.Out, "net loop: generation %d: shipped net %s as the best (%s)\n", s.Gen, s.New.SHA[:12], r.Dir.path("best.nnue"))
	return nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
