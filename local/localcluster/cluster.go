package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/engineallow"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

// MaxWorkers bounds Config.Workers: one process, one machine.
const MaxWorkers = 256

// Config is a coordinator and its local workers. Zero values take the
// defaults.
type Config struct {
	// Server is the coordinator. Its zero Data is a temporary directory,
	// removed by Stop; its zero Token a random one; its zero Listen
	// "127.0.0.1:0"; its zero LeaseDuration 30s. UnitDuration has no
	// default: a zero one is refused as --unit-duration is.
	Server ServerConfig
	// Workers is the number of in-process workers (0 to MaxWorkers).
	Workers int
	// Threads is each worker's units at once (default: cores / Workers,
	// all cores when there are none at Start).
	Threads int
	// HashMB is each worker's perft hash table in MB (at least 1).
	HashMB int
	// SharedHash gives all workers one table of Workers × HashMB, which
	// workers in one process can share and separate machines cannot.
	SharedHash bool
	// VerifyEngines are the engines under test the workers run verify
	// units for.
	VerifyEngines []verifyproto.LocalEngine
	// Builtin makes the embedded engine's players (match/builtin.New);
	// nil: the workers do not offer the embedded engine.
	Builtin match.BuiltinFactory
	// UploadedEngines gives each worker a data directory under the
	// coordinator's (workers/NAME): they run uploaded engines, in the
	// sandbox of the binary that runs them (its main must call
	// sandbox.RunIfWrapper).
	UploadedEngines bool
	// Engines are the installed engines the workers may run for a test
	// that names them (cmd=NAME; see spec/engineallow).
	Engines []engineallow.Engine
	// Syzygy are the workers' tablebases (a worker's --syzygy DIR), one
	// set for all: they adjudicate tests that ask for it and are probed by
	// engines with syzygy=N; nil: none.
	Syzygy *syzygy.Tablebase
	// Grace is how long a stopping worker may finish its units (5s).
	Grace time.Duration
	// BenchNPS, when set, is reported by every worker instead of running
	// the start-up bench (tests: no bench; --bench-nps: the same time
	// scale everywhere, e.g. none with the test's reference nps).
	BenchNPS uint64
	// OnWorkerExit, when set, is told when worker n (from 1) stops with
	// an error (from the worker's goroutine: several may call at once);
	// otherwise the error is logged.
	OnWorkerExit func(n int, err error)
}

// Cluster is a serving coordinator with its local workers.
type Cluster struct {
	*Server
	cfg     Config
	token   string
	tempDir string
	dataDir string             // the coordinator's
	table   *engine.PerftTable // shared by the workers started with the cluster

	workerCtx   context.Context
	stopWorkers context.CancelFunc
	wg          sync.WaitGroup
	mu          sync.Mutex // guards conns and workers, and orders AddWorkers before Stop
	conns       []*clusterclient.Client
	workers     int
	stopped     bool
	stopOnce    sync.Once
}

// Validate checks the workers' settings (Serve checks the server's).
func (c *Config) Validate() error {
	if c.Workers < 0 || c.Workers > MaxWorkers {
		return cliexit.Usage("--workers %d: must be between 0 and %d", c.Workers, MaxWorkers)
	}
	if c.HashMB < 1 {
		return cliexit.Usage("--hash %d: must be at least 1 MB", c.HashMB)
	}
	if c.BenchNPS > matchspec.MaxNPS {
		return cliexit.Usage("--bench-nps %d: at most %d", c.BenchNPS, uint64(matchspec.MaxNPS))
	}
	return nil
}

// Start serves the coordinator and starts the workers, each its own
// identity (so that they verify one another's perft units) with its own
// worker label on the shared registry.
func Start(cfg Config) (_ *Cluster, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Threads == 0 && cfg.Workers > 0 {
		cfg.Threads = max(1, runtime.NumCPU()/cfg.Workers)
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	sc := &cfg.Server
	if sc.Listen == "" {
		sc.Listen = "127.0.0.1:0"
	}
	if sc.LeaseDuration == 0 {
		sc.LeaseDuration = 30 * time.Second
	}
	if sc.Token == "" {
		b := make([]byte, 16)
		rand.Read(b)
		sc.Token = hex.EncodeToString(b)
	}
	if sc.Registry == nil {
		// One registry and one HTTP port for the coordinator and its
		// workers; each worker's series carry a worker label.
		sc.Registry = obs.NewRegistry()
	}
	cl := &Cluster{token: sc.Token}
	if sc.Data == "" {
		dir, err := os.MkdirTemp("", "arbiter-up-")
		if err != nil {
			return nil, err
		}
		cl.tempDir, sc.Data = dir, dir
	}
	defer func() {
		if err != nil {
			cl.Stop()
		}
	}()
	if cl.Server, err = Serve(*sc); err != nil {
		return nil, err
	}
	cl.dataDir = sc.Data
	cl.cfg = cfg
	cl.workerCtx, cl.stopWorkers = context.WithCancel(context.Background())
	if cfg.SharedHash && cfg.Workers > 0 {
		cl.table = engine.NewPerftTable(cfg.HashMB * cfg.Workers)
	}
	if err := cl.AddWorkers(cfg.Workers); err != nil {
		return nil, err
	}
	return cl, nil
}

// AddWorkers starts n more workers like the first ones, numbered after
// them. Workers added after Start have their own hash tables.
func (cl *Cluster) AddWorkers(n int) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.stopped {
		return errors.New("localcluster: AddWorkers after Stop")
	}
	if cl.workers+n > MaxWorkers {
		return fmt.Errorf("localcluster: %d workers are more than %d", cl.workers+n, MaxWorkers)
	}
	table := cl.table
	if cl.workers >= cl.cfg.Workers {
		table = nil
	}
	for range n {
		cl.workers++
		if err := cl.startWorker(cl.workers, table); err != nil {
			return err
		}
	}
	return nil
}

// startWorker starts worker n (from 1), named up-n. Caller holds mu.
func (cl *Cluster) startWorker(n int, table *engine.PerftTable) error {
	cfg := &cl.cfg
	tok, err := cl.c.Credentials.Ephemeral(fmt.Sprintf("up-worker-%d", n), identity.Worker)
	if err != nil {
		return err
	}
	c, err := clusterclient.Connect(clusterclient.Options{Address: cl.addr, Token: tok})
	if err != nil {
		return err
	}
	cl.conns = append(cl.conns, c)
	name := fmt.Sprintf("up-%d", n)
	var dataDir string
	if cfg.UploadedEngines {
		dataDir = filepath.Join(cl.dataDir, "workers", name)
	}
	engines, _, err := engineallow.New(cfg.Engines, engineallow.Bounds{}) // the user's own engines, on the user's machine: no bounds
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	w, err := worker.New(worker.Config{Conn: c.Conn(), Name: name, Threads: cfg.Threads, HashMB: cfg.HashMB, Table: table, DataDir: dataDir,
		AllowUploads: cfg.UploadedEngines, Engines: engines, Syzygy: cfg.Syzygy,
		Logger: cl.log, Grace: cfg.Grace, VerifyEngines: cfg.VerifyEngines, Builtin: cfg.Builtin, BenchNPS: cfg.BenchNPS,
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"worker": name}, cl.registry)})
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		if err := w.Run(cl.workerCtx); err != nil {
			if cfg.OnWorkerExit != nil {
				cfg.OnWorkerExit(n, err)
			} else {
				cl.log.Sugar().Errorf("worker %d: %v", n, err)
			}
		}
	}()
	return nil
}

// Token is the bootstrap admin credential.
func (cl *Cluster) Token() string { return cl.token }

// Threads is each worker's thread count.
func (cl *Cluster) Threads() int { return cl.cfg.Threads }

// Client connects to the coordinator with the admin credential.
func (cl *Cluster) Client() (*clusterclient.Client, error) {
	return clusterclient.Connect(clusterclient.Options{Address: cl.addr, Token: cl.token})
}

// Stop stops the workers (each gives back what it holds), then the
// coordinator, and removes a temporary data directory.
func (cl *Cluster) Stop() {
	cl.stopOnce.Do(func() {
		cl.mu.Lock()
		cl.stopped = true
		cl.mu.Unlock()
		if cl.stopWorkers != nil {
			cl.stopWorkers()
		}
		cl.wg.Wait()
		for _, c := range cl.conns {
			c.Close()
		}
		if cl.Server != nil {
			cl.Server.Stop()
		}
		if cl.tempDir != "" {
			os.RemoveAll(cl.tempDir)
		}
	})
}
