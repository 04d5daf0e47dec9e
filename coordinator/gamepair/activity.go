package gamepair

import (
	"strconv"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// ActivityWindow is the span of Activity: what a worker did recently.
const ActivityWindow = time.Hour

// Activity counts each worker's games and incidents over the last
// ActivityWindow, over every job of every workload that plays games (one
// Activity serves them all, as GameCounter does). Each worker has a ring of
// minute slots, so its memory is fixed whatever the worker plays. It is
// safe for concurrent use; a nil Activity counts nothing.
type Activity struct {
	now func() time.Time

	mu       sync.Mutex
	byWorker map[string]*activityRing
}

type activityRing struct {
	minute    [60]int64 // unix minute each slot counts
	games     [60]int64
	incidents [60]int64
}

// NewActivity returns an empty record; now is the clock (time.Now if nil).
func NewActivity(now func() time.Time) *Activity {
	if now == nil {
		now = time.Now
	}
	return &Activity{now: now, byWorker: map[string]*activityRing{}}
}

// Note counts games and incidents of worker id at when it falls in the
// window (replayed batches older than that are left out).
func (a *Activity) Note(id string, at time.Time, games int, incidents int64) {
	if a == nil || a.now().Sub(at) > ActivityWindow {
		return
	}
	m := at.Unix() / 60
	i := int(m % 60)
	if i < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.byWorker[id]
	if r == nil {
		r = &activityRing{}
		a.byWorker[id] = r
	}
	if r.minute[i] != m {
		r.minute[i], r.games[i], r.incidents[i] = m, 0, 0
	}
	r.games[i] += int64(games)
	r.incidents[i] += incidents
}

// Recent is what a worker did over the last ActivityWindow.
type Recent struct{ Games, Incidents int64 }

// Recent returns, by worker id, the games and incidents of the last
// ActivityWindow; idle workers are left out (and forgotten).
func (a *Activity) Recent() map[string]Recent {
	if a == nil {
		return nil
	}
	m := a.now().Unix() / 60
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]Recent, len(a.byWorker))
	for id, r := range a.byWorker {
		var sum Recent
		for i := range r.minute {
			if r.minute[i] > m-60 && r.minute[i] <= m {
				sum.Games += r.games[i]
				sum.Incidents += r.incidents[i]
			}
		}
		if sum == (Recent{}) {
			delete(a.byWorker, id)
			continue
		}
		out[id] = sum
	}
	return out
}

// IncidentCount is the number of incidents of a batch (overruns within the
// time margin are not incidents).
func IncidentCount(inc map[string]int64) int64 {
	n := int64(0)
	for k, v := range inc {
		if k != IncOverrun {
			n += v
		}
	}
	return n
}

// Barred lists the workers that get no more batches of the job: excluded
// for their incidents, or unable to run it.
func (ws *Workers) Barred() []string {
	var out []string
	for id, w := range ws.byID {
		if w.excluded {
			out = append(out, id)
		}
	}
	for id := range ws.refused {
		if w := ws.byID[id]; w == nil || !w.excluded {
			out = append(out, id)
		}
	}
	return out
}

// Bounds on the incident events of one batch.
const (
	maxIncidentEvents = 16
	maxEventDetail    = 300
)

// IncidentEvents are a batch's incidents with their reasons (what the
// worker reported), as events of kind EvIncident: at most
// maxIncidentEvents, the rest counted in the last. They are for reading;
// the counts come from the batch.
func IncidentEvents(jobID, unitID, workerID string, incs []*arbiterv1.Incident, at time.Time) []store.Event {
	var out []store.Event
	ev := func(detail string) store.Event {
		return store.Event{JobID: jobID, UnitID: unitID, WorkerID: workerID, Kind: EvIncident, Detail: detail, At: at}
	}
	for i, inc := range incs {
		if i == maxIncidentEvents {
			out = append(out, ev("and "+strconv.Itoa(len(incs)-i)+" more incidents in this batch"))
			break
		}
		detail := "game " + strconv.Itoa(int(inc.GetGameIndex())) + ": " + incidentClass(inc.GetKind())
		if e := inc.GetEngine(); e != "" {
			detail += " (" + e + ")"
		}
		if d := inc.GetDetail(); d != "" {
			detail += ": " + d
		}
		out = append(out, ev(Clip(detail, maxEventDetail)))
	}
	return out
}

// Clip cuts s to at most limit bytes, at a character boundary, marking the
// cut.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
