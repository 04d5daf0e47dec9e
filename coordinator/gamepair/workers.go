package gamepair

import (
	"fmt"
	"sort"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Judging workers. Each worker has, per job, a window of its most recent
// games (the window size) with the number of worker-caused incidents in
// them: time losses and hangs reported in its batches, and lost leases.
// Once the window holds at least half its size in games, a worker whose
// rate of worker-caused incidents exceeds the maximum rate gets no more
// batches of the job. Crashes and illegal moves are the engine's fault, not
// the worker's, so they are counted but do not exclude.
//
// A lost lease counts as one game with one worker-caused incident: a
// worker that loses leases and plays nothing is excluded after half a
// window of them, while one lost lease among full batches (a restart, a
// network blip) weighs like one bad game and does not.
//
// What a worker did is stored by the workload: batches with their
// incidents, and events of kind EvDisconnect (a lost lease), EvRefused
// (cannot run the job, with the worker's reason) and EvExcluded (the
// decision, with its reason). Replay sums them back on load, so status is
// the same before and after a restart.

// Event kinds of a worker in a job (store.Event.Kind).
const (
	EvDisconnect = "disconnect"
	EvRefused    = "refused"
	EvExcluded   = "excluded"
	// EvIncident is an incident of a game with its reason, for reading:
	// the counts come from the batch, and Replay skips these.
	EvIncident = "incident"
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

// Workers is what a job knows of the workers that played it or refused
// it. It is not safe for concurrent use: the workload's lock guards it.
type Workers struct {
	size    int
	maxRate float64
	byID    map[string]*worker
	refused map[string]string // workers that cannot run the job: why
	bench   map[string]uint64 // bench speed each worker played the job at (EvBench)
	// residual says when a worker's results exclude it (residual.go).
	residual ResidualSettings
}

type worker struct {
	games     int64
	incidents map[string]int64 // by incident class
	window    []windowEntry    // running jobs only
	excluded  bool
	reason    string
	penta     [5]int64 // its counted pairs (residual.go)
}

// NewWorkers returns an empty record judging over window games with the
// given maximum rate of worker-caused incidents.
func NewWorkers(window int, maxRate float64) *Workers {
	return &Workers{size: window, maxRate: maxRate, byID: map[string]*worker{}, refused: map[string]string{}, bench: map[string]uint64{}}
}

func (ws *Workers) get(id string) *worker {
	w := ws.byID[id]
	if w == nil {
		w = &worker{incidents: map[string]int64{}}
		ws.byID[id] = w
	}
	return w
}

// MayPlay reports whether worker id may get batches: it has not said it
// cannot run the job and was not excluded from it.
func (ws *Workers) MayPlay(id string) bool {
	if _, no := ws.refused[id]; no {
		return false
	}
	w := ws.byID[id]
	return w == nil || !w.excluded
}

// Refuse records that worker id cannot run the job; it reports whether
// this is news.
func (ws *Workers) Refuse(id, reason string) bool {
	_, seen := ws.refused[id]
	ws.refused[id] = reason
	return !seen
}

// LostLease counts a lost lease of worker id (a disconnect, judged as one
// bad game) and returns the reason of a new exclusion, or "".
func (ws *Workers) LostLease(id string) string {
	ws.get(id).incidents[IncDisconnect]++
	return ws.observe(id, lostLeaseEntry)
}

// Judge is the reason a batch of games games with bad worker-caused
// incidents would exclude worker id, or "" (also when it is excluded
// already). Nothing changes: the workload stores the decision with the
// batch, then calls Played.
func (ws *Workers) Judge(id string, games, bad int) string {
	w := ws.byID[id]
	var window []windowEntry
	if w != nil {
		if w.excluded {
			return ""
		}
		window = w.window
	}
	_, reason := judge(window, windowEntry{games, bad}, ws.size, ws.maxRate)
	return reason
}

// Played adds a counted batch of worker id: its games and incidents, and
// the batch to its window; reason (Judge's, stored with the batch)
// excludes the worker. It reports whether the worker is newly excluded.
func (ws *Workers) Played(id string, games int, inc map[string]int64, reason string) bool {
	ws.count(id, games, inc)
	w := ws.get(id)
	w.window, _ = judge(w.window, windowEntry{games, BadGames(inc)}, ws.size, ws.maxRate)
	if reason == "" || w.excluded {
		return false
	}
	w.excluded, w.reason = true, reason
	return true
}

func (ws *Workers) count(id string, games int, inc map[string]int64) {
	w := ws.get(id)
	w.games += int64(games)
	for k, n := range inc {
		w.incidents[k] += n
	}
}

// observe adds e to a worker's window and excludes it when judge says so;
// it returns the reason of a new exclusion.
func (ws *Workers) observe(id string, e windowEntry) string {
	w := ws.get(id)
	var reason string
	w.window, reason = judge(w.window, e, ws.size, ws.maxRate)
	if reason == "" || w.excluded {
		return ""
	}
	w.excluded, w.reason = true, reason
	return reason
}

// DropWindows forgets the windows (a finished job judges no more).
func (ws *Workers) DropWindows() {
	for _, w := range ws.byID {
		w.window = nil
	}
}

// WithWindow names a worker that keeps a window, or "" (a finished job
// keeps none).
func (ws *Workers) WithWindow() string {
	for id, w := range ws.byID {
		if w.window != nil {
			return id
		}
	}
	return ""
}

// Played is a counted batch as Replay needs it.
type Played struct {
	WorkerID  string
	Games     int
	Incidents map[string]int64
	At        time.Time
	Penta     [5]int64
}

// Replay rebuilds the record from a job's counted batches (in the order
// they were counted) and its events.
//
// Exclusions are taken from their events. A job without lost leases is
// also judged again batch by batch, which is what the live judgement saw
// (batches are counted in commit order) and what jobs stored before
// exclusion events existed need. With lost leases the interleaving of
// batches and leases is known only by time, so the windows are refilled in
// time order for the judgements to come, without judging.
func (ws *Workers) Replay(batches []Played, events []store.Event) {
	type item struct {
		at     time.Time
		worker string
		entry  windowEntry
	}
	var items []item
	lost := false
	for _, e := range events {
		lost = lost || e.Kind == EvDisconnect
	}
	for _, b := range batches {
		ws.count(b.WorkerID, b.Games, b.Incidents)
		ws.AddPenta(b.WorkerID, b.Penta)
		entry := windowEntry{games: b.Games, bad: BadGames(b.Incidents)}
		if lost {
			items = append(items, item{b.At, b.WorkerID, entry})
		} else {
			ws.observe(b.WorkerID, entry)
		}
	}
	for _, e := range events {
		switch e.Kind {
		case EvDisconnect:
			ws.get(e.WorkerID).incidents[IncDisconnect]++
			items = append(items, item{e.At, e.WorkerID, lostLeaseEntry})
		case EvRefused:
			ws.refused[e.WorkerID] = e.Detail
		case EvBench:
			ws.replayBench(e)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].at.Before(items[j].at) })
	for _, it := range items {
		w := ws.get(it.worker)
		w.window, _ = judge(w.window, it.entry, ws.size, ws.maxRate)
	}
	for _, e := range events {
		if w := ws.get(e.WorkerID); e.Kind == EvExcluded && !w.excluded {
			w.excluded, w.reason = true, e.Detail
		}
	}
}

// Rows renders every worker of the job, by id: games, incidents,
// exclusion or refusal ("cannot run the <noun>: why"), and the bench speed
// it played the job at when recorded (EvBench); fill adds what the
// workload knows of a worker (name, its speed where none is recorded,
// time scale).
func (ws *Workers) Rows(noun string, fill func(row *arbiterv1.WorkerIncidents)) []*arbiterv1.WorkerIncidents {
	ids := make([]string, 0, len(ws.byID)+len(ws.refused))
	for id := range ws.byID {
		ids = append(ids, id)
	}
	for id := range ws.refused {
		if ws.byID[id] == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var res map[string]float64
	if ws.residual.Limit > 0 {
		res = ws.ResidualOf()
	}
	var out []*arbiterv1.WorkerIncidents
	for _, id := range ids {
		wi := &arbiterv1.WorkerIncidents{WorkerId: id, BenchNps: ws.bench[id]}
		if fill != nil {
			fill(wi)
		}
		if w := ws.byID[id]; w != nil {
			wi.Games = uint64(w.games)
			wi.TimeLosses, wi.Crashes, wi.IllegalMoves = uint64(w.incidents[IncTimeLoss]), uint64(w.incidents[IncCrash]), uint64(w.incidents[IncIllegal])
			wi.Disconnects = uint64(w.incidents[IncDisconnect])
			wi.LimitKills = uint64(w.incidents[IncLimit])
			wi.Other = uint64(w.incidents[IncOther] + w.incidents[IncHang])
			wi.Excluded, wi.Reason = w.excluded, w.reason
		}
		if z, ok := res[id]; ok {
			wi.Residual, wi.HasResidual = z, true
		}
		if why, ok := ws.refused[id]; ok {
			wi.Excluded, wi.Reason = true, "cannot run the "+noun+": "+why
		}
		out = append(out, wi)
	}
	return out
}

// Exclude excludes worker id from the job for reason (a replay by other
// identities contradicted it); it reports whether this is news.
func (ws *Workers) Exclude(id, reason string) bool {
	w := ws.get(id)
	if w.excluded {
		return false
	}
	w.excluded, w.reason = true, reason
	return true
}
