package main

import (
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/worker"
)

// benchNPSUsage is --bench-nps of arbiter worker and arbiter up.
const benchNPSUsage = "report this speed instead of running the start-up bench: a test's clock is scaled by its reference nps / this (Fishtest's scaling; the bench is a 0.1 s search, noisy on a shared VM); the same value as the test's reference nps (arbiter submit sprt --reference-nps) plays its clock unscaled (0: measure)"

func newWorkerCommand() *cobra.Command {
	var (
		f         clicmd.ClientFlags
		threads   int
		syzygyDir string
		hashMB    int
		benchNPS  uint64
		name      string
		grace     time.Duration
		logs      logFlags
		httpAddr  string
		data      string
		cacheMB   int64
		buildTO   time.Duration
		limits    sandbox.Limits
		memMB     int64
		diskMB    int64
		unsafe    bool
		uploads   bool
		allow     []string
		allowF    string
		bounds    engineallow.Bounds
	)
	cmd := &cobra.Command{
		Use:     "worker",
		Short:   "Run a worker: lease units from a coordinator and compute them",
		Example: `  ARBITER_TOKEN=secret arbiter worker --coordinator host:7700 --threads 8 --hash 1024`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := clicmd.CheckThreads(threads); err != nil {
				return err
			}
			if err := clicmd.CheckHash(hashMB, 1); err != nil {
				return err
			}
			verifyEngines, err := verifyEnginesOf(cmd)
			if err != nil {
				return err
			}
			log, err := logs.logger()
			if err != nil {
				return err
			}
			c, err := f.Dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if cacheMB < 0 || memMB < 0 || diskMB < 0 || limits.OpenFiles < 0 || limits.CPU < 0 || buildTO < 0 {
				return usageError("--cache-mb, --engine-memory-mb, --engine-disk-mb, --engine-files, --engine-cpu and --build-timeout must not be negative")
			}
			limits.Memory, limits.Disk = memMB<<20, diskMB<<20
			if benchNPS > matchspec.MaxNPS {
				return usageError("--bench-nps %d: at most %d", benchNPS, uint64(matchspec.MaxNPS))
			}
			if uploads && data == "" {
				return usageError("--allow-uploads needs --data DIR (the cache of uploaded engines and their working directories)")
			}
			engines, err := allowedEngines(allow, allowF, engineBounds(bounds, threads), log)
			if err != nil {
				return err
			}
			tables, err := clicmd.OpenSyzygy("--syzygy", syzygyDir)
			if err != nil {
				return err
			}
			if tables != nil {
				defer tables.Close()
				log.Info("syzygy tables", zap.String("dir", syzygyDir), zap.Int("max_pieces", tables.MaxPieces()))
			}
			reg := obs.NewRegistry()
			w, err := worker.New(worker.Config{Conn: c.Conn(), Name: name, Threads: threads, HashMB: hashMB, Grace: grace, Logger: log,
				BenchNPS: benchNPS, VerifyEngines: verifyEngines, Builtin: builtin.New,
				Registerer: reg, DataDir: data, CacheBytes: cacheMB << 20, BuildTimeout: buildTO, Limits: limits, Unsandboxed: unsafe,
				AllowUploads: uploads, Engines: engines, Syzygy: tables})
			if err != nil {
				return usageError("%v", err)
			}
			if httpAddr != "" {
				hs, err := obs.Serve(httpAddr, obs.Handler(reg, w.Ready), log)
				if err != nil {
					return usageError("--http %s: %v", httpAddr, err)
				}
				defer hs.Close()
			}
			ctx, cancel := clicmd.SignalContext()
			defer cancel()
			err = w.Run(ctx)
			log.Sync()
			if err != nil {
				return cliexit.Call(c, "worker", err)
			}
			return nil
		},
	}
	f.Add(cmd.Flags())
	cmd.Flags().IntVar(&threads, "threads", 0, "units computed at once (default: all cores)")
	cmd.Flags().StringVar(&syzygyDir, "syzygy", "", "Syzygy tablebase directory: the worker plays tests adjudicated by tables of up to its most pieces")
	cmd.Flags().IntVar(&hashMB, "hash", workerHashMB, "perft hash table size in MB, shared by all threads")
	cmd.Flags().Uint64Var(&benchNPS, "bench-nps", 0, benchNPSUsage)
	cmd.Flags().StringVar(&name, "name", "", "worker name shown by the coordinator (default: host name)")
	addVerifyEngineFlag(cmd.Flags())
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "on SIGTERM, time to finish running units before releasing them")
	cmd.Flags().StringVar(&httpAddr, "http", "", "HTTP listen address for /metrics, /healthz and /readyz (default: off)")
	cmd.Flags().StringVar(&data, "data", "", "data directory for uploaded engines and nets (cache of downloads and builds, their working directories); without it the worker runs no uploaded engines and takes no tests that give an engine a net")
	cmd.Flags().Int64Var(&cacheMB, "cache-mb", worker.DefaultCacheBytes>>20, "size cap of the uploaded-engine cache in MB (least recently used go first)")
	cmd.Flags().DurationVar(&buildTO, "build-timeout", worker.DefaultBuildTimeout, "time limit of one source build")
	cmd.Flags().Int64Var(&memMB, "engine-memory-mb", sandbox.DefaultLimits.Memory>>20, "uploaded engines: resident memory above which one is killed (MB)")
	cmd.Flags().DurationVar(&limits.CPU, "engine-cpu", sandbox.DefaultLimits.CPU, "uploaded engines: CPU time one engine process may use in all")
	cmd.Flags().IntVar(&limits.OpenFiles, "engine-files", sandbox.DefaultLimits.OpenFiles, "uploaded engines: open files")
	cmd.Flags().Int64Var(&diskMB, "engine-disk-mb", sandbox.DefaultLimits.Disk>>20, "uploaded engines: bytes one engine may write in its working directory (MB; a size-limited tmpfs where user namespaces work)")
	cmd.Flags().BoolVar(&uploads, "allow-uploads", false, "run engines uploaded to the coordinator, and build uploaded source trees, always in the sandbox (needs --data)")
	cmd.Flags().StringArrayVar(&allow, "engine-allow", nil, "an installed engine clients may name (cmd=NAME): PATH, or name=NAME,cmd=PATH[,args=...][,dir=D][,options=OPT;OPT][,maxhash=MB][,maxthreads=N] (options that name files clients may set; its own Hash and Threads bounds); repeat for more")
	cmd.Flags().StringVar(&allowF, "engine-allow-file", "", "a file of --engine-allow entries, one a line (# comments)")
	cmd.Flags().IntVar(&bounds.MaxHashMB, "engine-max-hash", defaultEngineMaxHashMB, "installed engines: the largest Hash (MB) a test may give one (an --engine-allow entry's maxhash= overrides it)")
	cmd.Flags().IntVar(&bounds.MaxThreads, "engine-max-threads", 0, "installed engines: the most Threads a test may give one (default: --threads; an --engine-allow entry's maxthreads= overrides it)")
	cmd.Flags().BoolVar(&unsafe, "unsandboxed", false, "run uploaded engines without the sandbox (only where the worker is isolated otherwise, e.g. a throw-away VM)")
	logs.add(cmd.Flags(), "info")
	return cmd
}

// defaultEngineMaxHashMB is --engine-max-hash: two engines of a game at
// their bound fit the 2 GiB an uploaded engine may use in the sandbox.
const defaultEngineMaxHashMB = 1024

// engineBounds is --engine-max-hash and --engine-max-threads with
// --engine-max-threads 0 read as the worker's --threads (all cores for 0).
func engineBounds(b engineallow.Bounds, threads int) engineallow.Bounds {
	if b.MaxThreads == 0 {
		b.MaxThreads = threads
		if threads == 0 {
			b.MaxThreads = runtime.NumCPU()
		}
	}
	return b
}

// allowedEngines reads --engine-allow and --engine-allow-file into the
// worker's list with the worker's bounds on Hash and Threads; programs not
// found now are logged (they may come later).
func allowedEngines(flags []string, file string, bounds engineallow.Bounds, log *zap.Logger) (*engineallow.List, error) {
	if bounds.MaxHashMB < 1 || bounds.MaxHashMB > 1<<30 {
		return nil, usageError("--engine-max-hash %d: want MB in 1..%d", bounds.MaxHashMB, 1<<30)
	}
	if bounds.MaxThreads < 1 || bounds.MaxThreads > 4096 {
		return nil, usageError("--engine-max-threads %d: want 0 (the worker's --threads) to 4096", bounds.MaxThreads)
	}
	var all []engineallow.Engine
	for _, f := range flags {
		e, err := engineallow.ParseEntry(f)
		if err != nil {
			return nil, usageError("%v", err)
		}
		all = append(all, e)
	}
	if file != "" {
		more, err := engineallow.ParseFile(file)
		if err != nil {
			return nil, usageError("%v", err)
		}
		all = append(all, more...)
	}
	l, missing, err := engineallow.New(all, bounds)
	if err != nil {
		return nil, usageError("%v", err)
	}
	for _, m := range missing {
		log.Warn("allowed engine not found (yet): tests naming it are refused until it is installed", zap.String("cmd", m))
	}
	if l.Len() > 0 {
		log.Info("installed engines clients may name", zap.Strings("engines", l.Names()),
			zap.Int("max_hash_mb", bounds.MaxHashMB), zap.Int("max_threads", bounds.MaxThreads))
	}
	return l, nil
}
