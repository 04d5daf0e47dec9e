// Package datagen is the DATAGEN kind of job, every side of it in one
// folder: training data generated on the farm. Each side registers from
// this package's init (docs/kinds.md): the coordinator's workload, store
// schema and DatagenService (workload.go, store.go, service.go), the
// client's report and JSON detail (report.go), the web page (page.go),
// the CLI commands `arbiter submit datagen`, `arbiter datagen` and
// `arbiter datagen pull` (cmd_*.go). One blank import in kinds/install
// puts it in the binary; nothing else imports it.
//
// The workload: A job plays self-play games of one engine at
// a fixed node count from random (or book) openings, in batches that
// workers lease; each batch comes back as a shard (package datagen's
// encoding of its games), and the job ends when its shards hold the
// positions it asked for. It plugs into the coordinator with one
// registration (package workload), and keeps its own tables (store
// schema "datagen") and its shard files (DATA/datagen/, content-addressed).
//
// Invariants:
//   - A batch is counted once: datagen_shards has (job, batch) as primary
//     key, and a second result for a stored batch is answered DUPLICATE and
//     never added.
//   - A shard counts only after it replays: DecodeShard checks every move
//     is legal and every game ends as its final position says, CheckBatch
//     that its openings are those of the batch's seed and that adjudication
//     ended each game where it must, and the games are exactly the batch's.
//     Records are recomputed from the moves (dg.Records), never taken
//     from a worker.
//   - A shard's file is written (by content, atomically) before its row,
//     and the row before the worker is acknowledged: a crash leaves at most
//     an unreferenced file, swept at the next load.
//   - Duplicates are decided in acceptance order (the row's seq): a
//     record whose position an earlier record of the job had is dropped
//     (unless the job keeps duplicates), and the shard row lists the
//     dropped indexes, so that a pull gives the same records as the job
//     counted. Load rebuilds the positions seen from the shards of
//     running jobs.
//   - Positions: the job is done when its counted positions reach the
//     spec's; the shard that passes it is cut to fit (its row's take), so
//     a pulled dataset holds exactly the positions asked for. Batches
//     accepted after that are DISCARDED.
//   - Nothing a worker sends is a loop bound: a batch index is looked up,
//     never counted up to; a shard is capped in bytes, games and plies.
//
// Locking follows core.Workload: mu guards memory and is never held across
// a store write; commitMu serialises the decisions that end in a write.
package datagen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Kind is the kind's name: the stored job kind, Job.kind, the page's and
// the CLI's word.
const Kind = "datagen"

// Family is how clients show datasets (jobkind.Family).
const Family jobkind.Family = "datagen"

func init() {
	workload.Register(workload.Kind{
		Name: Kind,
		Spec: func() proto.Message { return &arbiterv1.DatagenSpec{} },
		New:  func(d workload.Deps) (core.Workload, error) { return New(d) },
		// After the built-in kinds, where the core asked it before it
		// plugged in.
		// A dataset is played by an engine its submitter may have uploaded.
		Runs:  workload.SubmittedPrograms,
		Order: 50,
		Flags: flags,
		Example: func(engine, _ string) []string {
			return []string{"datagen", "--json", "--engine", engine, "--positions", "100", "--each", "nodes=1000"}
		},
		Dashboard: &workload.DashboardRow{Title: "Training data (DATAGEN)", Panels: []workload.DashboardPanel{
			{Title: "Datasets running", Description: "DATAGEN jobs being generated now.", Unit: "none", Stat: true,
				Queries: []workload.DashboardQuery{{Expr: `arbiter_datagen_running_jobs`}}, Width: 6, Height: 6},
			{Title: "Positions/s", Description: "Training positions counted into datasets per second, cluster-wide (after duplicates are dropped).", Unit: "short",
				Queries: []workload.DashboardQuery{{Expr: `rate(arbiter_datagen_positions_total[$__rate_interval])`, Legend: "positions/s"}}, Width: 6, Height: 6},
			{Title: "Self-play games/min", Description: "Games of accepted dataset shards per minute.", Unit: "short",
				Queries: []workload.DashboardQuery{{Expr: `rate(arbiter_datagen_games_total[$__rate_interval]) * 60`, Legend: "games/min"}}, Width: 6, Height: 6},
			{Title: "Duplicate positions", Description: "Share of accepted positions that repeated an earlier one of their dataset. A rising share: more random plies or book positions are needed.", Unit: "percentunit",
				Queries: []workload.DashboardQuery{{Expr: `rate(arbiter_datagen_duplicates_total[$__rate_interval]) / clamp_min(rate(arbiter_datagen_duplicates_total[$__rate_interval]) + rate(arbiter_datagen_positions_total[$__rate_interval]), 1e-9)`, Legend: "duplicates"}}, Width: 6, Height: 6},
		}},
	})
	store.RegisterSchema(schema)
}

// Workload is the DATAGEN workload.
type Workload struct {
	workload.Problems // the datasets the last Load skipped

	deps  workload.Deps
	log   *zap.Logger
	store *store.Store
	host  core.Host
	dir   string // shard files
	met   *metrics

	commitMu sync.Mutex
	mu       sync.Mutex
	jobs     map[string]*job
	running  []*job
	names    map[string]string // worker id → name, for snapshots
}

// job is one dataset in memory; fields marked "running" are nil once it
// has finished.
type job struct {
	rec        *store.Job
	spec       *arbiterv1.DatagenSpec
	settings   dg.Settings
	filters    dg.Filters
	batchGames int
	prog       progress
	workers    map[string]*share
	shardSeq   int64     // shards stored
	expired    time.Time // when its shards were deleted by retention (zero: kept)

	// running
	seen     map[[16]byte]struct{} // positions of counted records
	stored   map[uint64]bool
	open     map[uint64]string // batch → worker
	retry    []uint64
	next     uint64
	excluded map[string]string // worker → why it cannot run the job
}

// share is one worker's part of a job.
type share struct {
	positions, games, batches, refused uint64
	seconds                            float64
}

// Config is the workload's settings (workload.Deps.Settings).
type Config struct {
	// Dir keeps the shard files: an existing, writable directory (CheckDir).
	// "": DATA/datagen under the coordinator's data directory.
	Dir string
}

// CheckDir says why dir cannot keep shards (nil when it can): it must be
// an existing directory this process can write to.
// flags adds --datagen-dir to the coordinator command.
func flags(fs *pflag.FlagSet) func() (any, error) {
	dir := fs.String("datagen-dir", "", "directory that keeps the shards of datasets: an existing directory the coordinator can write (default: DATA/datagen)")
	return func() (any, error) {
		if *dir != "" {
			if err := CheckDir(*dir); err != nil {
				return nil, fmt.Errorf("--datagen-dir %v (it must be an existing directory the coordinator can write)", err)
			}
		}
		return Config{Dir: *dir}, nil
	}
}

func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such directory", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s: not a directory", dir)
	}
	f, err := os.CreateTemp(dir, "incoming-check-")
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%s: not writable (permission denied)", dir)
	}
	if err != nil {
		return fmt.Errorf("%s: not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// New returns the workload; the core calls Load.
func New(d workload.Deps) (*Workload, error) {
	if d.Store == nil {
		return nil, fmt.Errorf("datagen: a store is required")
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	cfg, err := workload.SettingsOf[Config](d)
	if err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	dir := cfg.Dir
	if dir != "" {
		if err := CheckDir(dir); err != nil {
			return nil, fmt.Errorf("datagen: shard directory %w", err)
		}
	} else {
		dir = filepath.Join(d.DataDir, "datagen")
		if d.DataDir == "" {
			dir = filepath.Join(d.Store.Dir(), "datagen")
		}
		if err := store.MkdirPrivate(dir); err != nil {
			return nil, fmt.Errorf("datagen: shard directory: %w", err)
		}
	}
	w := &Workload{deps: d, log: d.Logger, store: d.Store, dir: dir, jobs: make(map[string]*job), names: make(map[string]string)}
	w.met = newMetrics(w, d.Registerer)
	return w, nil
}

// SetHost gives the workload the core to signal.
func (w *Workload) SetHost(h core.Host) { w.host = h }

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

func (j *job) running() bool { return j.rec.State == store.StateRunning }

// unitID names batch idx of job jobID.
func unitID(jobID string, idx uint64) string { return jobID + ".d" + strconv.FormatUint(idx, 10) }

// parseUnit splits a unit id; it costs O(len(unitID)).
func parseUnit(u string) (jobID string, idx uint64, ok bool) {
	i := strings.LastIndex(u, ".d")
	if i <= 0 || len(u)-i > 22 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(u[i+2:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return u[:i], n, true
}

// finish ends j in memory after the store has its final state. Caller
// holds mu (or is loading).
func (w *Workload) finish(j *job, ch *store.JobChange) {
	j.rec.State, j.rec.Error, j.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	if i := slices.Index(w.running, j); i >= 0 {
		w.running = slices.Delete(w.running, i, i+1)
	}
	j.seen, j.stored, j.open, j.retry, j.excluded = nil, nil, nil, nil, nil
	w.log.Info("dataset finished", zap.String(logging.JobID, j.rec.ID), zap.String("state", ch.State), zap.String("error", ch.Error),
		zap.Uint64("positions", j.prog.positions), zap.Uint64("games", j.prog.games))
}

// Cancel implements core.Workload. Stored shards stay.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	j := w.jobs[jobID]
	w.mu.Unlock()
	if j == nil {
		return nil
	}
	if !j.running() {
		return nil
	}
	change := &store.JobChange{State: store.StateCancelled, Error: reason, FinishedAt: w.deps.Now()}
	if err := w.store.SetJobState(ctx, jobID, change); err != nil {
		return err
	}
	w.mu.Lock()
	w.finish(j, change)
	w.mu.Unlock()
	return nil
}

// Fail implements core.Failer: the coordinator ends a dataset that no
// worker could start (grpcapi.StallWatch). Stored shards stay.
func (w *Workload) Fail(ctx context.Context, jobID, reason string) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	change := &store.JobChange{State: store.StateFailed, Error: reason, FinishedAt: w.deps.Now()}
	return gamepair.Cancel(ctx, w.store, &w.mu, w.jobs, func(j *job) *store.Job { return j.rec }, jobID, change, w.finish)
}

var (
	_ core.Workload        = (*Workload)(nil)
	_ core.Failer          = (*Workload)(nil)
	_ workload.Needer      = (*Workload)(nil)
	_ workload.Retainer    = (*Workload)(nil)
	_ workload.Servicer    = (*Workload)(nil)
	_ workload.Quarantiner = (*Workload)(nil)
)
