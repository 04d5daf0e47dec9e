package main

// `arbiter net loop`: the NNUE net loop as one command (local/netloop):
// datagen with the best net, train, SPRT the new net against the best,
// ship it on H1, K times; every step content-addressed and cached under
// --dir, so the same command resumes a stopped loop. docs/nnue.md.

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/local/netloop"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newNetLoopCommand() *cobra.Command {
	f := netloop.Flags{Generations: 1, TrainOn: "new", GamesCap: 20000, Seed: 1, Concurrency: 1, Threads: min(runtime.NumCPU(), 256)}
	var status, jsonOut, htmlOut, forceNew bool
	var client clicmd.ClientFlags
	cmd := &cobra.Command{
		Use:   "loop",
		Short: "Run the net loop: generate data with the best net, train, SPRT the new net against the best, ship it on H1; K generations, resumable",
		Long: `Run the NNUE net loop on this machine, K generations of:

  datagen with the current best net (arbiter datagen) → train a net on the new data,
  or on all the data so far (arbiter train) → SPRT the new net against the best
  (arbiter match --sprt, capped at --games-cap) → on H1, ship it: DIR/best.nnue.

Every step is content-addressed under --dir (its key is the SHA-256 of its kind,
its settings and its inputs' hashes; a done marker is written last), so a stopped
loop resumes where it stood when the same command is run again, and a step already
done is not recomputed. --status prints each generation's data, training, SPRT and
whether it shipped (--json for JSON, --html for the page the loop keeps in
DIR/index.html, which reloads itself while the loop runs).

  arbiter net loop --dir nets/loop --engine name=dev,builtin --generations 2 \
      --positions 1000000 --each nodes=5000 --train epochs=20 --sprt elo0=0,elo1=5
  arbiter net loop --dir nets/loop --status

With --coordinator (and --token) the loop runs on a farm: datagen is a DATAGEN
job played with the best net (uploaded), pulled into DIR; training stays here;
the SPRT is a cluster SPRT test of net=new against net=best; a shipped net also
becomes the default net of the engine's name there (arbiter net default). A
job's id is kept in its step's directory, so the same command re-attaches to
a job still running instead of submitting another.

  arbiter net loop --coordinator farm:7700 --token T --dir nets/loop \
      --engine name=dev,builtin --positions 1000000 --each nodes=5000

--train keys: epochs, batch, lr, lr-final, wdl, scale, val, weight-decay, seed
(arbiter train's flags; defaults as there). docs/nnue.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status {
				return netLoopStatus(cmd, f.Dir, jsonOut, htmlOut)
			}
			if jsonOut || htmlOut {
				return usageError("--json and --html: go with --status")
			}
			s, err := f.Check()
			if err != nil {
				return usageError("%v", err)
			}
			var farm *clusterclient.Client
			if client.Given() {
				c, err := client.Dial()
				if err != nil {
					return err
				}
				defer c.Close()
				// The coordinator answers and takes the credential before a
				// step (a resumed loop may train here first).
				if _, err := c.Jobs.ListJobs(context.Background(), &arbiterv1.ListJobsRequest{Limit: 1}); err != nil {
					return cliexit.Call(c, "list jobs", err)
				}
				farm = c
			}
			d := netloop.Dir(f.Dir)
			unlock, err := d.Lock()
			if err != nil {
				return usageError("%v", err)
			}
			defer unlock()
			if err := d.Open(s, f.Generations, forceNew); err != nil {
				return usageError("%v", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r := &netloop.Runner{Dir: d, Settings: s, Generations: f.Generations, Concurrency: f.Concurrency, Threads: f.Threads, Out: cmd.ErrOrStderr(), Farm: farm}
			p, err := r.Run(ctx)
			if err != nil {
				return failure("net loop: %v", err)
			}
			netloop.StatusOf(d, s, f.Generations, p).WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Dir, "dir", "", "the loop's directory: its settings, every step's output, the best net")
	fl.StringVar(&f.Engine, "engine", "", "the embedded engine whose net the loop trains: name=NAME,builtin[,option.X=V...]")
	fl.IntVar(&f.Generations, "generations", f.Generations, "generations to run (a later run may ask for more)")
	fl.IntVar(&f.Positions, "positions", 0, "positions of a generation's data")
	fl.StringVar(&f.Each, "each", "", "nodes=N[,option.X=V...]: the nodes a move, in datagen and in the SPRT")
	fl.StringVar(&f.Train, "train", "", "KEY=VAL,...: the training (epochs, batch, lr, lr-final, wdl, scale, val, weight-decay, seed)")
	fl.StringVar(&f.TrainOn, "train-on", f.TrainOn, "new (the generation's data) or all (every generation's so far)")
	fl.StringVar(&f.SPRT, "sprt", netloop.DefaultSPRT, "the SPRT of the new net against the best: elo0=E0,elo1=E1[,alpha=..][,beta=..][,model=..]")
	fl.IntVar(&f.GamesCap, "games-cap", f.GamesCap, "games at most in an SPRT (no decision by then: not shipped)")
	fl.StringVar(&f.Openings, "openings", "", "the SPRT's openings, as arbiter match --openings (default: 500 openings of 8 random plies drawn into DIR/openings.epd)")
	fl.Uint64Var(&f.Seed, "seed", f.Seed, "datagen seed of generation 1 (generation g: seed+g-1)")
	fl.IntVar(&f.Concurrency, "concurrency", f.Concurrency, "datagen batches and SPRT games at once")
	fl.IntVar(&f.Threads, "threads", f.Threads, "training threads (the net does not depend on them)")
	fl.BoolVar(&forceNew, "force-new", false, "make --dir the loop of these settings even though it holds a loop of others (steps with the same keys are reused)")
	fl.BoolVar(&status, "status", false, "print the loop's state in --dir and exit")
	fl.BoolVar(&jsonOut, "json", false, "with --status: print it as JSON")
	fl.BoolVar(&htmlOut, "html", false, "with --status: print it as the loop's page (the loop itself keeps DIR/index.html up to date)")
	client.AddOptional(fl, "run datagen and the SPRT as jobs of this coordinator (and ship there: net default), train here")
	return cmd
}

func netLoopStatus(cmd *cobra.Command, dir string, jsonOut, htmlOut bool) error {
	if dir == "" {
		return usageError("--dir: required (the loop's directory)")
	}
	d := netloop.Dir(dir)
	s, gens, err := d.Load()
	if err != nil {
		return usageError("%v", err)
	}
	r := &netloop.Runner{Dir: d, Settings: s, Generations: gens}
	p, err := r.Plan()
	if err != nil {
		return failure("%v", err)
	}
	st := netloop.StatusOf(d, s, gens, p)
	switch {
	case jsonOut && htmlOut:
		return usageError("--json and --html: give one")
	case jsonOut:
		return st.WriteJSON(cmd.OutOrStdout())
	case htmlOut:
		return st.WriteHTML(cmd.OutOrStdout(), 0)
	}
	st.WriteText(cmd.OutOrStdout())
	return nil
}
