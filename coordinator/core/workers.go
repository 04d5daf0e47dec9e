package core

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// Caps is what a worker says it can do.
type Caps struct {
	Cores         uint32   `json:"cores"`
	HashMB        uint32   `json:"hash_mb"`
	EngineVersion string   `json:"engine_version"`
	Hostname      string   `json:"hostname"`
	Tags          []string `json:"capabilities"` // "perft", "game-pair", "verify-engine:NAME", ...
	BenchNPS      uint64   `json:"bench_nps"`
	BenchSig      uint64   `json:"bench_signature"`
	Platform      string   `json:"platform,omitempty"` // GOOS/GOARCH
}

// Has reports whether the capabilities include tag.
func (c Caps) Has(tag string) bool { return slices.Contains(c.Tags, tag) }

// Worker is a registered worker. Its fields are set at registration and
// read-only afterwards, except lastSeen and waiting (under the core's
// lock).
type Worker struct {
	ID           string
	Name         string
	Owner        string // the identity that registered it
	Caps         Caps
	RegisteredAt time.Time
	tags         map[string]bool
	lastSeen     time.Time
	// waiting counts the worker's Lease calls held open for work: a worker
	// waiting longer than a lease duration is still live.
	waiting int
}

// Has reports whether the worker advertised a capability.
func (w *Worker) Has(tag string) bool { return w.tags[tag] }

// TagsWithPrefix returns the suffixes of the worker's tags that start with
// prefix ("verify-engine:" → engine names).
func (w *Worker) TagsWithPrefix(prefix string) []string {
	var out []string
	for _, t := range w.Caps.Tags {
		if s, ok := strings.CutPrefix(t, prefix); ok {
			out = append(out, s)
		}
	}
	return out
}

func newWorker(id, name, owner string, caps Caps, at time.Time) *Worker {
	w := &Worker{ID: id, Name: name, Owner: owner, Caps: caps, RegisteredAt: at, tags: make(map[string]bool, len(caps.Tags))}
	for _, t := range caps.Tags {
		w.tags[t] = true
	}
	return w
}

func workerFromStore(sw store.Worker) *Worker {
	var caps Caps
	_ = json.Unmarshal([]byte(sw.Capabilities), &caps) // a bad row loads with no capabilities
	owner := sw.Owner
	if owner == "" {
		// Registered before identities existed: its own identity, so it
		// never shares an owner with another worker.
		owner = "legacy:" + sw.ID
	}
	return newWorker(sw.ID, sw.Name, owner, caps, sw.RegisteredAt)
}

// addWorker indexes w. Caller holds mu.
func (c *Core) addWorker(w *Worker) {
	c.workers[w.ID] = w
	names := c.byOwner[w.Owner]
	if names == nil {
		names = make(map[string]*Worker)
		c.byOwner[w.Owner] = names
	}
	names[w.Name] = w
	c.notePool(w.Owner)
}

// CheckCaps refuses capabilities no real worker sends.
func CheckCaps(caps Caps) error {
	if caps.Cores == 0 || caps.Cores > 65536 {
		return apierr.Invalid("capabilities.cores %d: must be between 1 and 65536", caps.Cores)
	}
	if len(caps.Tags) > MaxTags {
		return apierr.Invalid("capabilities: %d entries, at most %d", len(caps.Tags), MaxTags)
	}
	for _, t := range caps.Tags {
		if t == "" || len(t) > MaxNameBytes || !utf8.ValidString(t) {
			return apierr.Invalid("capability %s: must be 1 to %d bytes of UTF-8", apierr.Q(t), MaxNameBytes)
		}
	}
	for what, s := range map[string]string{"engine_version": caps.EngineVersion, "hostname": caps.Hostname, "platform": caps.Platform} {
		if len(s) > MaxNameBytes {
			return apierr.Invalid("capabilities.%s longer than %d bytes", what, MaxNameBytes)
		}
	}
	return nil
}

// Register records a worker for caller and returns it. The same identity
// registering the same name again gets the same worker id back (its
// capabilities updated), so restarts do not pile up ids.
func (c *Core) Register(ctx context.Context, caller identity.Identity, name string, caps Caps) (*Worker, error) {
	if !caller.CanWork() {
		return nil, wrongRole(caller, "act as a worker")
	}
	if name == "" {
		name = "worker"
	}
	if len(name) > MaxNameBytes || !utf8.ValidString(name) {
		return nil, apierr.Invalid("worker name %s: must be at most %d bytes of UTF-8", apierr.Q(name), MaxNameBytes)
	}
	if err := CheckCaps(caps); err != nil {
		return nil, err
	}
	if err := c.Ready(); err != nil {
		return nil, err
	}
	now := c.cfg.Now()
	c.mu.Lock()
	id := ""
	if prev := c.byOwner[caller.Name][name]; prev != nil {
		id = prev.ID
	} else if len(c.byOwner[caller.Name]) >= c.cfg.MaxWorkersPerIdentity && !c.evictIdle(caller.Name, now) {
		c.mu.Unlock()
		return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
			"worker %s refused: identity %s already has %d registered workers, all active, and may have at most %d "+
				"(the coordinator's --max-workers-per-identity); reuse a worker name, or ask the admin for a higher limit or another credential",
			apierr.Q(name), apierr.Q(caller.Name), len(c.byOwner[caller.Name]), c.cfg.MaxWorkersPerIdentity)
	}
	c.mu.Unlock()
	if id == "" {
		id = "w-" + randomHex(6)
	}
	w := newWorker(id, name, caller.Name, caps, now)
	capsJSON, _ := json.Marshal(caps)
	if c.store != nil {
		if err := c.store.PutWorker(ctx, store.Worker{ID: id, Name: name, Owner: caller.Name, Capabilities: string(capsJSON), RegisteredAt: now}); err != nil {
			return nil, apierr.Store(err)
		}
	}
	c.mu.Lock()
	w.lastSeen = now
	c.addWorker(w)
	c.mu.Unlock()
	c.wake.signal()
	c.log.Info("worker registered", zap.String(logging.WorkerID, id), zap.String("name", name), zap.String("owner", caller.Name),
		zap.Uint32("cores", caps.Cores), zap.Uint32("hash_mb", caps.HashMB), zap.String("engine_version", caps.EngineVersion),
		zap.Strings("capabilities", caps.Tags), zap.Uint64("bench_nps", caps.BenchNPS))
	return w, nil
}

// evictIdle forgets the least recently seen worker of owner that holds no
// lease and has not been seen for a lease duration (a pod that was
// replaced, a machine renamed), making room for a new one. Its stored row
// stays (its runs name it). Caller holds mu.
func (c *Core) evictIdle(owner string, now time.Time) bool {
	busy := map[string]bool{}
	for _, l := range c.leases.All() {
		busy[l.WorkerID] = true
	}
	var oldest *Worker
	for _, w := range c.byOwner[owner] {
		if busy[w.ID] || now.Sub(w.lastSeen) < c.cfg.LeaseDuration {
			continue
		}
		if oldest == nil || w.lastSeen.Before(oldest.lastSeen) {
			oldest = w
		}
	}
	if oldest == nil {
		return false
	}
	delete(c.byOwner[owner], oldest.Name)
	c.notePool(owner)
	delete(c.workers, oldest.ID)
	c.log.Info("idle worker forgotten to make room", zap.String(logging.WorkerID, oldest.ID), zap.String("owner", owner),
		zap.Time("last_seen", oldest.lastSeen))
	return true
}

// caller resolves a worker id for caller and marks it seen. Caller holds
// mu.
func (c *Core) callerWorker(caller identity.Identity, workerID string) (*Worker, error) {
	if !caller.CanWork() {
		return nil, wrongRole(caller, "act as a worker")
	}
	w := c.workers[workerID]
	if w == nil {
		return nil, apierr.New(apierr.NotFound, apierr.ReasonUnknownWorker, "unknown worker %s: register again", apierr.Q(workerID))
	}
	if w.Owner != caller.Name {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonNotLeaseHolder,
			"worker %s belongs to another identity", apierr.Q(workerID))
	}
	w.lastSeen = c.cfg.Now()
	return w, nil
}

// WorkerView is a worker as status pages show it.
type WorkerView struct {
	ID, Name, Owner string
	Caps            Caps
	RegisteredAt    time.Time
	LastSeen        time.Time
	Leases          int
	Units           []string // units it holds leases on
	// Waiting: it is in a Lease call now, waiting for work (a long poll
	// that may outlast a lease duration).
	Waiting bool
}

// Live reports whether the worker is live at now as the core counts
// workers for its workloads (Host.LiveWorkers): seen within a lease
// duration, holding a lease, or waiting for work.
func (w WorkerView) Live(now time.Time, leaseDuration time.Duration) bool {
	return w.Leases > 0 || w.Waiting || now.Sub(w.LastSeen) <= leaseDuration
}

// Workers returns every worker, most recently seen first.
func (c *Core) Workers() []WorkerView {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]WorkerView, 0, len(c.workers))
	held := map[string][]string{}
	for _, w := range c.workers {
		held[w.ID] = nil
	}
	for _, l := range c.leases.All() {
		held[l.WorkerID] = append(held[l.WorkerID], l.UnitID)
	}
	for _, w := range c.workers {
		out = append(out, WorkerView{ID: w.ID, Name: w.Name, Owner: w.Owner, Caps: w.Caps, RegisteredAt: w.RegisteredAt,
			LastSeen: w.lastSeen, Leases: len(held[w.ID]), Units: held[w.ID], Waiting: w.waiting > 0})
	}
	sortWorkers(out)
	return out
}

// Worker returns one registered worker.
func (c *Core) Worker(id string) (*Worker, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.workers[id]
	return w, w != nil
}

func sortWorkers(ws []WorkerView) {
	sort.Slice(ws, func(i, j int) bool {
		if !ws[i].LastSeen.Equal(ws[j].LastSeen) {
			return ws[i].LastSeen.After(ws[j].LastSeen)
		}
		return ws[i].ID < ws[j].ID
	})
}

// Need is what every unit of a job asks of a worker, as its workload says
// (workload.Needer): status shows a running job that no live worker can
// run as blocked, with the reason, and a job that says so fails when none
// could start it for the coordinator's start timeout.
type Need struct {
	// Caps are the capabilities a worker must offer (base/capability).
	Caps []string
	// Fits says why a worker with Caps still cannot run the job (its
	// engine's platform, say; "" when it can); nil: any worker with Caps
	// can.
	Fits func(Caps) string
	// Barred are the workers the job gives no more units (its engine did
	// not start there, too many bad games), by id, with why.
	Barred map[string]string
	// FailUnstarted: a job no connected worker can start ends failed after
	// the start timeout, since its engine is the likely fault (tests,
	// tunes, datasets). Without it the job waits for a worker however long
	// (a perft job needs only the embedded engine).
	FailUnstarted bool
}
