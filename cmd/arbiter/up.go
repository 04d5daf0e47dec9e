package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/client/testflags"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// startposPerft are the published perft counts of the start position
// (OEIS A048987), used to confirm a result of `arbiter up`.
var startposPerft = []string{"1", "20", "400", "8902", "197281", "4865609", "119060324", "3195901860",
	"84998978956", "2439530234167", "69352859712417", "2097651003696806", "62854969236701747",
	"1981066775000396239", "61885021521585529237", "2015099950053364471960"}

// upFlags are `arbiter up`'s flags: the local cluster, and the perft job
// or test it runs.
type upFlags struct {
	cluster  localcluster.Config
	logs     logFlags
	web      webFlags
	depth    int
	fen      string
	verify   float64
	splitPly int
	divide   bool
	jsonOut  bool
	stats    bool
	slices   int
	test     testflags.Flags
	// temp: the store in a temporary directory removed on exit.
	temp bool
	// keepServing: after --depth's job or --engine's test, serve on
	// until Ctrl-C (make demo: the pages stay up to be looked at).
	keepServing bool
	// prometheus: the Prometheus binary to start ("": none).
	prometheus string
	// syzygy: the tablebase directory of the workers and the coordinator.
	syzygy string
}

func newUpCommand() *cobra.Command {
	var f upFlags
	cmd := &cobra.Command{
		Use:   "up",
		Short: "A coordinator and local workers in one process, over real gRPC on loopback",
		Long: `up starts a coordinator and N workers in this process, talking gRPC over
loopback exactly as separate machines would. Its store is kept in the
user's data directory ($XDG_DATA_HOME/arbiter/up, default
~/.local/share/arbiter/up) unless --data names another or --temp asks for a
temporary one. It listens on 127.0.0.1:7700 when that port is free, and
writes its address and token in the data directory's coordinator.json:
every client command on this machine (submit, status, pgn, ...) finds it
there without --coordinator or --token. With --depth it runs one perft job, prints the total and
divide, and exits. With --engine it plays a test as arbiter submit match
--wait does, and with more than two engines a tournament (one test per
pairing, rated together at the end). Run again with the same job or test
on the same data directory after it was stopped (Ctrl-C, a kill, a
reboot), it goes on with that job or test, its finished work kept, instead
of starting another. Without either it keeps serving so that more
workers and clients can join (the address and token are printed); with
--keep-serving it serves on after the job or test too.`,
		Example: `  arbiter up --workers 2 --depth 7
  arbiter up --workers 2 --fen "FEN" --depth 6 --recheck 1
  arbiter up --workers 2 --engine name=a,builtin --engine name=b,builtin,tc=5+0.05 \
      --each tc=10+0.1 --openings file=books/uho-200.epd --games 20
  arbiter up --workers 2 --engine name=a,builtin --engine name=b,builtin,nodes=2000 \
      --engine name=c,builtin,nodes=500 --each nodes=1000 --openings file=books/uho-200.epd \
      --tournament roundrobin --rounds 1 --games 2
  arbiter up --listen 0.0.0.0:7700 --data ./data --token T`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd, &f) },
	}
	fl := cmd.Flags()
	c := &f.cluster
	fl.IntVar(&c.Workers, "workers", 2, "local workers")
	fl.IntVar(&c.Threads, "threads", 0, "threads per worker (default: cores / workers)")
	fl.IntVar(&c.HashMB, "hash", 0, fmt.Sprintf("perft hash MB per local worker (default: %d MB for this machine, as arbiter worker's, divided among --workers)", workerHashMB))
	fl.StringVar(&c.Server.Data, "data", "", "data directory (default: arbiter/up under the user's data directory, $XDG_DATA_HOME or ~/.local/share, kept between runs)")
	fl.BoolVar(&f.temp, "temp", false, "keep the data in a temporary directory, removed on exit")
	fl.BoolVar(&f.keepServing, "keep-serving", false, "after the perft job (--depth) or the test (--engine), keep serving the pages and clients until Ctrl-C")
	fl.StringVar(&c.Server.Listen, "listen", clicmd.DefaultCoordinator, "gRPC listen address (the default's port when free, else any free port)")
	fl.StringVar(&c.Server.Token, "token", "", "token (default: $ARBITER_TOKEN or a random one)")
	fl.IntVar(&f.depth, "depth", -1, "run perft to this depth, print it and exit")
	fl.StringVar(&f.fen, "fen", engine.StartFEN, "position for --depth")
	fl.Float64Var(&f.verify, "recheck", 0.05, "share of perft units computed again on a second worker")
	fl.Float64Var(&f.verify, "verify", 0.05, "deprecated: use --recheck")
	fl.MarkDeprecated("verify", "use --recheck (arbiter verify is the move-generator check)")
	fl.IntVar(&f.splitPly, "split-ply", 0, "split ply (0: chosen from depth)")
	fl.BoolVar(&f.divide, "divide", true, "print the divide")
	fl.BoolVar(&f.jsonOut, "json", false, "print the result as JSON: a perft as arbiter perft --json does, a test as status --json (docs/json.md)")
	f.logs.add(fl, "warn")
	fl.StringVar(&f.prometheus, "prometheus", "", "start Prometheus (this binary; given alone: prometheus on PATH, Debian's package) on a loopback port, scraping this farm with the shipped alert rules, its data under --data; the pages' /monitor shows its key figures")
	fl.Lookup("prometheus").NoOptDefVal = promDefault
	fl.StringVar(&c.Server.HTTP, "http", "127.0.0.1:0", "HTTP listen address for the web pages (docs/web.md), /metrics (coordinator and local workers, label worker), /healthz, /readyz (\"\": off)")
	f.web.add(fl)
	// Webhooks and git sources as the coordinator takes them: the
	// refusals of both name these flags, so the demo must accept them.
	addRequestFlags(fl, &c.Server)
	fl.Uint64Var(&c.BenchNPS, "bench-nps", 0, benchNPSUsage)
	fl.StringVar(&f.syzygy, "syzygy", "", "Syzygy tablebase directory of the local workers (as arbiter worker --syzygy) and of the coordinator's replay: tests adjudicated by tables (--tb-pieces) and engines probing them (syzygy=N) play here")
	fl.BoolVar(&c.SharedHash, "shared-hash", true, "local workers share one hash table (workers × --hash MB)")
	fl.BoolVar(&f.stats, "stats", false, "with --depth: count the statistics too (captures, e.p., castles, promotions, checks, discovered and double checks, mates)")
	fl.IntVar(&f.slices, "slices", 0, "with --depth: cut each position's tree into this many slices (0: one per worker, 1: none)")
	addVerifyEngineFlag(fl)
	fl.DurationVar(&c.Server.UnitDuration, "unit-duration", 2*time.Second, "target compute time of one unit")
	// The workers are here: when every one of them refused a test (its
	// engine cannot play it), waiting minutes for another to connect
	// only hides the reason.
	fl.DurationVar(&c.Server.StartTimeout, "start-timeout", 10*time.Second, "fail a test that no connected worker can start (every local worker refused it: its engine cannot play it) after this long")
	f.test.Add(fl, "") // --engine ... --sprt ...: run a test on the local workers (docs/sprt-cluster.md)
	f.test.AddTournament(fl, "rated together at the end")
	fl.Lookup("pgnout").Usage = "write every game to this PGN file when the test ends" // up always waits
	return cmd
}

func runUp(cmd *cobra.Command, f *upFlags) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	c := &f.cluster
	stderr := cmd.ErrOrStderr()
	lock, err := f.chooseData(cmd.Flags().Changed("data"), stderr)
	if err != nil {
		return err
	}
	if lock != nil {
		defer lock.Release()
	}
	if !cmd.Flags().Changed("listen") {
		c.Server.Listen = listenOrAny(c.Server.Listen, stderr)
	}
	if c.Workers < 2 && f.verify > 0 {
		fmt.Fprintln(stderr, "arbiter up: rechecking units needs two workers; --recheck ignored")
		f.verify = 0
	}
	if c.Server.Token == "" {
		c.Server.Token = resolveToken("")
	}
	log, err := f.logs.logger()
	if err != nil {
		return err
	}
	c.Server.Logger = log
	promBin, promListen, err := f.promFlags()
	if err != nil {
		return err
	}
	c.Server.Pages, c.Server.API = f.web.pages(log), httpapi.ForCoordinator
	c.Server.Hooks.JobJSON = jobJSON
	c.Server.Accounts = f.web.accounts
	c.Server.OnListening = func(addr string) { fmt.Fprintf(stderr, "arbiter coordinator: listening on %s\n", addr) }
	c.Builtin = builtin.New
	tables, err := clicmd.OpenSyzygy("--syzygy", f.syzygy)
	if err != nil {
		return err
	}
	if tables != nil {
		defer tables.Close()
		c.Syzygy, c.Server.Syzygy = tables, tables
	}
	// This binary is the sandbox of uploaded engines (main runs its wrapper).
	c.UploadedEngines = true
	// The user is the workers' operator here: the installed engines of
	// this command line are allowed, as given (a client of this
	// coordinator can run them, and no other program).
	c.Engines = upEngines(f.test.M.Match.Engines, f.test.M.Match.Each)
	c.OnWorkerExit = func(n int, err error) { fmt.Fprintf(stderr, "arbiter up: worker %d: %v\n", n, err) }
	cl, err := localcluster.Start(*c)
	if err != nil {
		return err
	}
	defer cl.Stop()
	ctx, cancel := clicmd.SignalContext()
	defer cancel()
	pages, err := announceUp(stderr, f, c, cl, lock)
	if err != nil {
		return err
	}
	if promBin != "" {
		prom, err := startPrometheus(ctx, promBin, cl.Data(), loopbackTarget(cl.HTTPAddr()), promListen, f.web.prometheusScrape)
		if err != nil {
			return err
		}
		defer prom.Stop()
		fmt.Fprintf(stderr, "arbiter up: prometheus on %s (configuration %s)\n", prom.URL, filepath.Join(cl.Data(), "prometheus", "prometheus.yml"))
	}
	serve := func() error {
		if !f.keepServing || ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(stderr, "arbiter up: serving on until Ctrl-C\n")
		<-ctx.Done()
		return nil
	}

	// Jobs are cut for (and a test that no connected worker can start
	// fails after --start-timeout from) the workers the coordinator has
	// seen: let ours register first.
	if f.test.M.Given() || f.depth >= 0 {
		for t0 := time.Now(); len(cl.Coordinator().Core.Workers()) < c.Workers && time.Since(t0) < 30*time.Second && ctx.Err() == nil; {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if f.test.M.Given() {
		// As `submit match|sprt --wait`: more than two engines play a
		// tournament, one test per pairing.
		err := f.test.Run(cmd.OutOrStdout(), stderr, f.test.M.Match.SPRT != "",
			jobreport.TestOutput{Wait: true, JSON: f.jsonOut, PGNOut: f.test.PGNOut, Pages: pages, Resume: true},
			func() (context.Context, *clusterclient.Client, func(), error) {
				client, err := cl.Client()
				if err != nil {
					return nil, nil, nil, err
				}
				return ctx, client, func() { client.Close() }, nil
			})
		if err != nil {
			return err
		}
		return serve()
	}
	if f.depth < 0 {
		fmt.Fprintf(stderr, "arbiter up: serving; elsewhere connect with --coordinator %s --token %s (Ctrl-C stops)\n", cl.Addr(), cl.Token())
		<-ctx.Done()
		return nil
	}
	if err := runUpPerft(ctx, cmd, f, cl); err != nil {
		return err
	}
	return serve()
}

// promFlags settles --prometheus before anything starts: its binary and
// the loopback address it will listen on, which the pages are told.
func (f *upFlags) promFlags() (bin, listen string, err error) {
	if f.prometheus == "" {
		return "", "", nil
	}
	if f.cluster.Server.HTTP == "" {
		return "", "", usageError("--prometheus with --http \"\": Prometheus scrapes the coordinator's --http port; give one")
	}
	if bin, err = promBinary(f.prometheus); err != nil {
		return "", "", err
	}
	if listen, err = freeLoopback(); err != nil {
		return "", "", fmt.Errorf("--prometheus: %w", err)
	}
	f.web.prometheusURL = "http://" + listen + "/"
	return bin, listen, nil
}

// check validates up's flags before anything starts, and settles the
// worker hash its flags leave to it.
func (f *upFlags) check(cmd *cobra.Command) error {
	c := &f.cluster
	if !cmd.Flags().Changed("hash") {
		c.HashMB = max(1, workerHashMB/max(1, c.Workers))
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if err := f.web.check(); err != nil {
		return err
	}
	if err := checkRequestFlags(c.Server); err != nil {
		return err
	}
	verifyEngines, err := verifyEnginesOf(cmd)
	if err != nil {
		return err
	}
	c.VerifyEngines = verifyEngines
	if cmd.Flags().Changed("depth") {
		if err := clicmd.CheckDepth(cmd.Flags(), f.depth, 0); err != nil {
			return err
		}
	}
	if f.verify < 0 || f.verify > 1 {
		return usageError("--recheck %v: must be between 0 and 1", f.verify)
	}
	if f.slices < 0 || f.slices > 256 {
		return usageError("--slices %d: must be between 0 (automatic) and 256", f.slices)
	}
	if _, err := engine.ParseFEN(f.fen); err != nil {
		return usageError("--fen: %v", err)
	}
	return nil
}

// announceUp tells the user where the farm is: its pages, metrics, how to
// sign in and how clients find it. It returns the pages' URL ("" without
// them).
func announceUp(stderr io.Writer, f *upFlags, c *localcluster.Config, cl *localcluster.Cluster, lock *clicmd.ConnLock) (string, error) {
	kept := "kept; --temp for a temporary one"
	if f.temp || cl.Data() != c.Server.Data {
		kept = "temporary, removed on exit"
	}
	fmt.Fprintf(stderr, "arbiter up: coordinator on %s with %d workers × %d threads (data %s: %s)\n", cl.Addr(), c.Workers, cl.Threads(), cl.Data(), kept)
	pages := ""
	if a := cl.HTTPAddr(); a != "" {
		pages = pagesURL(a)
		fmt.Fprintf(stderr, "arbiter up: pages on %s\n", pages)
		fmt.Fprintf(stderr, "arbiter up: metrics on http://%s/metrics\n", a)
		// The README sends a newcomer to the pages signed in; the token
		// is otherwise only in the connection file (mode 0600, the same
		// user as this terminal).
		fmt.Fprintf(stderr, "arbiter up: sign in on %ssignin with the token %s\n", pages, cl.Token())
	}
	if lock != nil {
		if err := lock.Publish(clicmd.UpConnection{Address: cl.Addr(), Token: cl.Token(), Pages: pages}); err != nil {
			return "", fmt.Errorf("writing the connection file: %w", err)
		}
		fmt.Fprintf(stderr, "arbiter up: clients on this machine find it through %s\n", lock.Path())
	} else {
		fmt.Fprintf(stderr, "arbiter up: clients: export %s=%s %s=%s\n", clicmd.EnvCoordinator, cl.Addr(), auth.EnvToken, cl.Token())
	}
	return pages, nil
}

// runUpPerft runs (or, on a kept --data, resumes) up's perft job on the
// farm and prints it as arbiter perft does.
func runUpPerft(ctx context.Context, cmd *cobra.Command, f *upFlags, cl *localcluster.Cluster) error {
	stderr := cmd.ErrOrStderr()
	client, err := cl.Client()
	if err != nil {
		return err
	}
	defer client.Close()
	// On a kept --data, the same perft still running (the process was
	// killed) is resumed rather than started again.
	job, err := runningPerft(ctx, client, f.fen, f.depth, f.stats)
	if err != nil {
		return cliexit.Call(client, "list jobs", err)
	}
	verb := "resuming"
	if job == nil {
		resp, err := client.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{
			Fen: f.fen, Depth: uint32(f.depth), VerifyFraction: f.verify, SplitPly: uint32(f.splitPly), Stats: f.stats, Slices: uint32(f.slices),
		}})
		if err != nil {
			return cliexit.Call(client, "submit", err)
		}
		job, verb = resp.GetJob(), "job"
	}
	fmt.Fprintf(stderr, "arbiter up: %s %s: perft %d, %d units, %d unique positions at ply %d, %d slices\n", verb, job.GetJobId(), f.depth,
		job.GetProgress().GetUnitsTotal(), job.GetProgress().GetPositions(), job.GetPerft().GetSplitPly(), job.GetPerft().GetSlices())
	// The perft kind waits for and prints its job (its report's Wait):
	// this command does not import kinds/perft.
	wait, err := jobreport.WaiterOf(job)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	final, err := wait(ctx, client, job, jobreport.WaitOptions{Out: out, Progress: stderr, Bar: !f.jsonOut, JSON: f.jsonOut, Divide: f.divide || !f.jsonOut})
	if err != nil {
		return err
	}
	if !f.jsonOut && final.GetPerft().GetFen() == engine.StartFEN && f.depth < len(startposPerft) {
		if final.GetNodes() != startposPerft[f.depth] {
			return failure("perft(%d) = %s differs from the published %s", f.depth, final.GetNodes(), startposPerft[f.depth])
		}
		fmt.Fprintf(out, "Verified: matches the published perft(%d) of the start position\n", f.depth)
	}
	return nil
}

// chooseData settles where the store lives: --data as given, a
// temporary directory with --temp, else the user's data directory, taken
// with its connection file (nil when the store is elsewhere). A data
// directory another up holds sends this one to a temporary directory.
func (f *upFlags) chooseData(dataGiven bool, stderr io.Writer) (*clicmd.ConnLock, error) {
	c := &f.cluster.Server
	switch {
	case f.temp && dataGiven:
		return nil, usageError("--temp and --data: give one (--temp keeps the data in a temporary directory)")
	case f.temp:
		c.Data = ""
		return nil, nil
	case dataGiven:
		if c.Data == "" {
			return nil, usageError("--data: empty; give a directory, or --temp for a temporary one")
		}
		return nil, nil
	}
	dir, err := clicmd.DefaultUpData()
	if err != nil {
		return nil, usageError("%v", err)
	}
	lock, err := clicmd.LockUpData(dir)
	if errors.Is(err, clicmd.ErrDataBusy) {
		fmt.Fprintf(stderr, "arbiter up: %s is %v; this one keeps its data in a temporary directory\n", dir, err)
		c.Data = ""
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w (give --data DIR or --temp)", dir, err)
	}
	c.Data = dir
	return lock, nil
}

// listenOrAny is addr when its port is free, else the same host on any
// free port (another coordinator has the default one), said on stderr.
func listenOrAny(addr string, stderr io.Writer) string {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		l.Close()
		return addr
	}
	host, _, _ := net.SplitHostPort(addr)
	fmt.Fprintf(stderr, "arbiter up: %s is taken (%v); listening on another port\n", addr, err)
	return net.JoinHostPort(host, "0")
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

// upEngines allows each installed engine (cmd=) of up's --engine flags
// under the name a test sends (its cmd= value), with its arguments,
// directory and the options of it and of --each that name files. Specs
// that do not parse are left to the test's own checks.
func upEngines(engines []string, each string) []engineallow.Engine {
	var eachOpts []enginespec.Setting
	if each != "" {
		if e, err := enginespec.Parse(each, enginespec.Each); err == nil {
			eachOpts = e.Options
		}
	}
	var out []engineallow.Engine
	for _, s := range engines {
		spec, err := enginespec.Parse(s, enginespec.Match)
		if err != nil || spec.Cmd == "" || spec.Travels() || spec.Proto == enginespec.Builtin {
			continue
		}
		a := engineallow.Engine{Name: spec.Cmd, Cmd: spec.Cmd, Args: spec.Args, Dir: spec.Dir}
		for _, o := range append(slices.Clone(eachOpts), spec.Options...) {
			if engineallow.NamesFile(o.Key, o.Value) {
				a.FileOptions = append(a.FileOptions, o.Key)
			}
		}
		// The same program given twice (two settings of one engine):
		// one entry, with the file options of both.
		i := slices.IndexFunc(out, func(o engineallow.Engine) bool {
			return o.Name == a.Name && slices.Equal(o.Args, a.Args) && o.Dir == a.Dir
		})
		if i >= 0 {
			out[i].FileOptions = append(out[i].FileOptions, a.FileOptions...)
			continue
		}
		out = append(out, a)
	}
	return out
}
