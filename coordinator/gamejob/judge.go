package gamejob

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
)

// Judging workers. Each worker has, per test, a window of its most recent
// games (Config.IncidentWindow) with the number of worker-caused incidents
// in them: time losses and hangs reported in its batches, and lost leases.
// Once the window holds at least half its size in games, a worker whose
// rate of worker-caused incidents exceeds Config.IncidentMaxRate gets no
// more batches of the test. Crashes and illegal moves are the engine's
// fault, not the worker's, so they are counted but do not exclude.
//
// A lost lease counts as one game with one worker-caused incident: a
// worker that loses leases and plays nothing is excluded after half a
// window of them, while one lost lease among full batches (a restart, a
// network blip) weighs like one bad game and does not.
//
// What a worker did is stored: batches with their incidents, and events of
// kind evDisconnect (a lost lease), evRefused (cannot run the test, with
// the worker's reason) and evExcluded (the decision, with its reason). On
// Load the counts are summed back and exclusions taken from their events, so
// status is the same before and after a restart.

// Incident classes counted per worker (stored in a batch's incidents).
const (
	incTimeLoss   = "time_loss"
	incCrash      = "crash"
	incIllegal    = "illegal"
	incHang       = "hang"
	incDisconnect = "disconnect"
	incOther      = "other"
	incOverrun    = "overrun"
)

// Event kinds the workload stores (store.Event.Kind).
const (
	evDisconnect = "disconnect"
	evRefused    = "refused"
	evExcluded   = "excluded"
	// evIncident is an incident of a game, with its reason (what the
	// worker reported); counted from the batch, not from these events.
	evIncident = "incident"
)

type windowEntry struct{ games, bad int }

// lostLeaseEntry is a lost lease in the incident window.
var lostLeaseEntry = windowEntry{games: 1, bad: 1}

// judge returns the worker's window with e added and older entries beyond
// size games dropped, and the reason to exclude the worker ("" when its
// rate is normal or it has played too few games). window is not modified.
func judge(window []windowEntry, e windowEntry, size int, maxRate float64) ([]windowEntry, string) {
	all := append(window[:len(window):len(window)], e)
	n, bad, start := 0, 0, 0
	for i := len(all) - 1; i >= 0; i-- {
		if n >= size {
			start = i + 1
			break
		}
		n += all[i].games
		bad += all[i].bad
	}
	kept := all[start:]
	if n == 0 || n < size/2 {
		return kept, ""
	}
	if rate := float64(bad) / float64(n); rate > maxRate {
		return kept, fmt.Sprintf("%d worker-caused incidents (time losses, hangs, lost leases) in its last %d games (%.0f%% > %.0f%%)",
			bad, n, 100*rate, 100*maxRate)
	}
	return kept, ""
}

// observe adds e to a worker's window and excludes it when judge says so;
// it returns the reason of a new exclusion. Caller holds mu.
func (w *Workload) observe(t *test, workerID string, e windowEntry) string {
	tw := t.worker(workerID)
	var reason string
	tw.window, reason = judge(tw.window, e, w.cfg.IncidentWindow, w.cfg.IncidentMaxRate)
	if reason == "" || tw.excluded {
		return ""
	}
	w.exclude(t, workerID, reason)
	return reason
}

// exclude marks a worker excluded from t. Caller holds mu.
func (w *Workload) exclude(t *test, workerID, reason string) {
	tw := t.worker(workerID)
	tw.excluded, tw.reason = true, reason
	w.log.Warn("worker excluded from test", zap.String(logging.JobID, t.rec.ID), zap.String(logging.WorkerID, workerID),
		zap.String("reason", reason))
}

// lostLease counts a lost lease against its worker and stores it. Caller
// holds mu.
func (w *Workload) lostLease(t *test, l core.Lease) {
	now := w.cfg.Now()
	t.worker(l.WorkerID).incidents[incDisconnect]++
	w.noteActivity(l.WorkerID, now, 0, 1)
	evs := []store.Event{eventOf(t, l.UnitID, l.WorkerID, evDisconnect, "lease "+l.ID+" expired", now)}
	if reason := w.observe(t, l.WorkerID, lostLeaseEntry); reason != "" {
		evs = append(evs, eventOf(t, l.UnitID, l.WorkerID, evExcluded, reason, now))
	}
	w.events.add(evs...)
}

// badGames is the number of worker-caused incidents of a batch.
func badGames(inc map[string]int64) int {
	return int(inc[incTimeLoss] + inc[incHang])
}

func eventOf(t *test, unitID, workerID, kind, detail string, at time.Time) store.Event {
	return store.Event{JobID: t.rec.ID, UnitID: unitID, WorkerID: workerID, Kind: kind, Detail: detail, At: at}
}

func encodeIncidents(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if m[k] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

// decodeIncidents reads encodeIncidents' output; parts that do not parse
// (or are negative) are skipped.
func decodeIncidents(s string) map[string]int64 {
	m := map[string]int64{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			m[k] += n
		}
	}
	return m
}

// eventQueue writes events that arise under the core's lock (lost leases,
// refusals), where no store write may happen: add queues them and starts a
// writer goroutine if none runs; Flush writes what is queued and waits for
// a running writer. Events are written in the order they were added. A
// coordinator killed between add and the write loses those events (the
// window is a store round trip); a graceful shutdown calls Flush.
type eventQueue struct {
	store *store.Store
	log   *zap.Logger

	writeMu sync.Mutex // held while writing
	mu      sync.Mutex
	pending []store.Event
	running bool
}

func (q *eventQueue) init(st *store.Store, log *zap.Logger) { q.store, q.log = st, log }

func (q *eventQueue) add(evs ...store.Event) {
	if q.store == nil || len(evs) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, evs...)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.drain()
	}
}

func (q *eventQueue) drain() {
	for {
		q.writeMu.Lock()
		q.mu.Lock()
		evs := q.pending
		q.pending = nil
		if len(evs) == 0 {
			q.running = false
			q.mu.Unlock()
			q.writeMu.Unlock()
			return
		}
		q.mu.Unlock()
		q.write(context.Background(), evs)
		q.writeMu.Unlock()
	}
}

func (q *eventQueue) write(ctx context.Context, evs []store.Event) error {
	err := q.store.AddEvents(ctx, evs)
	if err != nil {
		q.log.Error("events not stored", zap.Int("events", len(evs)), zap.Error(err))
	}
	return err
}

// Flush writes every queued event; when it returns, every event queued
// before the call is stored (or its error is returned).
func (w *Workload) Flush(ctx context.Context) error {
	q := &w.events
	if q.store == nil {
		return nil
	}
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.mu.Lock()
	evs := q.pending
	q.pending = nil
	q.mu.Unlock()
	if len(evs) == 0 {
		return nil
	}
	return q.write(ctx, evs)
}
