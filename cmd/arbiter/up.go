package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/identity"
	"github.com/arbiter-chess/arbiter/internal/obs"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker"
)

func init() { subcommands = append(subcommands, newUpCommand) }

// startposPerft are the published perft counts of the start position
// (OEIS A048987), used to confirm a result of `arbiter up`.
var startposPerft = []string{"1", "20", "400", "8902", "197281", "4865609", "119060324", "3195901860",
	"84998978956", "2439530234167", "69352859712417", "2097651003696806", "62854969236701747",
	"1981066775000396239", "61885021521585529237", "2015099950053364471960"}

func newUpCommand() *cobra.Command {
	var (
		workers  int
		threads  int
		hashMB   int
		data     string
		listen   string
		token    string
		depth    int
		fen      string
		verify   float64
		splitPly int
		divide   bool
		jsonOut  bool
		logs     logFlags
		httpAddr string
		unitDur  time.Duration
		shared   bool
		test     testFlags
		stats    bool
		slices   int
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "A coordinator and local workers in one process, over real gRPC on loopback",
		Long: `up starts a coordinator (store in --data, or a temporary directory) and N
workers in this process, talking gRPC over loopback exactly as separate
machines would. With --depth it runs one perft job, prints the total and
divide, and exits; without, it keeps serving so that more workers and
clients can join (the address and token are printed).`,
		Example: `  arbiter up --workers 2 --depth 7
  arbiter up --workers 2 --fen "FEN" --depth 6 --verify 1
  arbiter up --listen 0.0.0.0:7700 --data ./data --token T`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workers < 0 || workers > 256 {
				return usageError("--workers %d: must be between 0 and 256", workers)
			}
			verifyEngines, err := verifyEnginesOf(cmd)
			if err != nil {
				return err
			}
			if depth > engine.MaxPerftDepth {
				return usageError("--depth %d: must be at most %d", depth, engine.MaxPerftDepth)
			}
			if verify < 0 || verify > 1 {
				return usageError("--verify %v: must be between 0 and 1", verify)
			}
			if hashMB < 1 {
				return usageError("--hash %d: must be at least 1 MB", hashMB)
			}
			if slices < 0 || slices > 256 {
				return usageError("--slices %d: must be between 0 (automatic) and 256", slices)
			}
			if _, err := engine.ParseFEN(fen); err != nil {
				return usageError("--fen: %v", err)
			}
			if threads == 0 && workers > 0 {
				threads = max(1, runtime.NumCPU()/workers)
			}
			if workers < 2 && verify > 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "arbiter up: verification needs two workers; --verify ignored")
				verify = 0
			}
			if token == "" {
				token = resolveToken("")
			}
			if token == "" {
				b := make([]byte, 16)
				rand.Read(b)
				token = hex.EncodeToString(b)
			}
			if data == "" {
				dir, err := os.MkdirTemp("", "arbiter-up-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				data = dir
			}
			stderr := cmd.ErrOrStderr()
			log, err := logs.logger()
			if err != nil {
				return err
			}
			// One registry and one HTTP port for the coordinator and its
			// local workers; each worker's series carry a worker label.
			reg := obs.NewRegistry()
			rc, err := startCoordinator(coordinatorFlags{
				listen: listen, data: data, token: token, leaseDuration: 30 * time.Second,
				unitDuration: unitDur, log: logs, http: httpAddr, registry: reg,
			}, stderr)
			if err != nil {
				return err
			}
			defer rc.stop()

			ctx, cancel := signalContext()
			defer cancel()
			wctx, stopWorkers := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var conns []io.Closer
			defer func() {
				stopWorkers()
				wg.Wait()
				for _, c := range conns {
					c.Close()
				}
			}()
			// Workers in one process can share one hash table (of
			// workers × --hash MB); separate machines cannot.
			var table *engine.PerftTable
			if shared && workers > 0 {
				table = engine.NewPerftTable(hashMB * workers)
			}
			for i := 0; i < workers; i++ {
				// Each local worker is its own identity, so that local
				// workers verify one another's perft units.
				wtok, err := rc.c.Credentials.Ephemeral(fmt.Sprintf("up-worker-%d", i+1), identity.Worker)
				if err != nil {
					return err
				}
				c, err := clusterclient.Connect(clusterclient.Options{Address: rc.addr, Token: wtok})
				if err != nil {
					return err
				}
				conns = append(conns, c)
				w, err := worker.New(worker.Config{Conn: c.Conn(), Name: fmt.Sprintf("up-%d", i+1), Threads: threads,
					HashMB: hashMB, Table: table, Logger: log, Grace: 5 * time.Second, VerifyEngines: verifyEngines, Builtin: builtin.New,
					Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"worker": fmt.Sprintf("up-%d", i+1)}, reg)})
				if err != nil {
					return usageError("%v", err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := w.Run(wctx); err != nil {
						fmt.Fprintf(stderr, "arbiter up: worker %d: %v\n", i+1, err)
					}
				}()
			}
			fmt.Fprintf(stderr, "arbiter up: coordinator on %s with %d workers × %d threads (data %s)\n", rc.addr, workers, threads, data)
			if rc.http != nil {
				fmt.Fprintf(stderr, "arbiter up: metrics on http://%s/metrics\n", rc.http.Addr())
			}

			if test.given() {
				return runUpTest(ctx, cmd.OutOrStdout(), stderr, [2]string{rc.addr, token}, &test)
			}
			if depth < 0 {
				fmt.Fprintf(stderr, "arbiter up: serving; connect with --coordinator %s --token %s (Ctrl-C stops)\n", rc.addr, token)
				<-ctx.Done()
				return nil
			}
			c, err := clusterclient.Connect(clusterclient.Options{Address: rc.addr, Token: token})
			if err != nil {
				return err
			}
			defer c.Close()
			// The job is cut for the workers the coordinator has seen (its
			// split and slices): let ours register first.
			for t0 := time.Now(); len(rc.c.Core.Workers()) < workers && time.Since(t0) < 30*time.Second && ctx.Err() == nil; {
				time.Sleep(20 * time.Millisecond)
			}
			// On a kept --data, the same perft still running (the process was
			// killed) is resumed rather than started again.
			job, err := runningPerft(ctx, c, fen, depth, stats)
			if err != nil {
				return callError(c, "list jobs", err)
			}
			verb := "resuming"
			if job == nil {
				resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
					Fen: fen, Depth: uint32(depth), VerifyFraction: verify, SplitPly: uint32(splitPly), Stats: stats, Slices: uint32(slices),
				}})
				if err != nil {
					return callError(c, "submit", err)
				}
				job, verb = resp.GetJob(), "job"
			}
			fmt.Fprintf(stderr, "arbiter up: %s %s: perft %d, %d units, %d unique positions at ply %d, %d slices\n", verb, job.GetJobId(), depth,
				job.GetProgress().GetUnitsTotal(), job.GetProgress().GetPositions(), job.GetPerft().GetSplitPly(), job.GetPerft().GetSlices())
			final, err := waitJob(ctx, c, job.GetJobId(), stderr, !jsonOut)
			if err != nil {
				return err
			}
			if err := printJobResult(cmd.OutOrStdout(), final, divide || !jsonOut, jsonOut); err != nil {
				return err
			}
			if !jsonOut && final.GetPerft().GetFen() == engine.StartFEN && depth < len(startposPerft) {
				if final.GetNodes() == startposPerft[depth] {
					fmt.Fprintf(cmd.OutOrStdout(), "Verified: matches the published perft(%d) of the start position\n", depth)
				} else {
					return failure("perft(%d) = %s differs from the published %s", depth, final.GetNodes(), startposPerft[depth])
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&workers, "workers", 2, "local workers")
	fl.IntVar(&threads, "threads", 0, "threads per worker (default: cores / workers)")
	fl.IntVar(&hashMB, "hash", 128, "perft hash MB per worker")
	fl.StringVar(&data, "data", "", "data directory (default: a temporary one, removed on exit)")
	fl.StringVar(&listen, "listen", "127.0.0.1:0", "gRPC listen address")
	fl.StringVar(&token, "token", "", "token (default: $ARBITER_TOKEN or a random one)")
	fl.IntVar(&depth, "depth", -1, "run perft to this depth, print it and exit")
	fl.StringVar(&fen, "fen", engine.StartFEN, "position for --depth")
	fl.Float64Var(&verify, "verify", 0.05, "share of units computed again on a second worker")
	fl.IntVar(&splitPly, "split-ply", 0, "split ply (0: chosen from depth)")
	fl.BoolVar(&divide, "divide", true, "print the divide")
	fl.BoolVar(&jsonOut, "json", false, "print the result as JSON (like arbiter perft --json)")
	logs.add(fl, "warn")
	fl.StringVar(&httpAddr, "http", "", "HTTP listen address for /metrics (coordinator and local workers, label worker), /healthz, /readyz (default: off)")
	fl.BoolVar(&shared, "shared-hash", true, "local workers share one hash table (workers × --hash MB)")
	fl.BoolVar(&stats, "stats", false, "with --depth: count the statistics too (captures, e.p., castles, promotions, checks, discovered and double checks, mates)")
	fl.IntVar(&slices, "slices", 0, "with --depth: cut each position's tree into this many slices (0: one per worker, 1: none)")
	addVerifyEngineFlag(fl)
	fl.DurationVar(&unitDur, "unit-duration", 2*time.Second, "target compute time of one unit")
	test.add(fl, "") // --engine ... --sprt ...: run a test on the local workers (docs/sprt-cluster.md)
	return cmd
}

// runningPerft returns the running perft job of fen at depth (with or
// without statistics) in the coordinator, or nil.
func runningPerft(ctx context.Context, c *clusterclient.Client, fen string, depth int, stats bool) (*arbiterv1.Job, error) {
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return nil, err
	}
	resp, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: 1000})
	if err != nil {
		return nil, err
	}
	for _, j := range resp.GetJobs() {
		p := j.GetPerft()
		if j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING && p != nil && p.GetFen() == pos.FEN() &&
			int(p.GetDepth()) == depth && p.GetStats() == stats {
			return j, nil
		}
	}
	return nil, nil
}
