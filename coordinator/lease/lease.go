// Package lease tracks work leases: who holds which unit until when.
//
// It is pure bookkeeping driven by the clock the caller passes in; it does no
// I/O and starts no goroutines, so the coordinator decides when to expire and
// tests can step time by hand. A Manager is not safe for concurrent use; the
// coordinator guards it with its own lock.
//
// Invariants:
//   - A live lease is in leases, in byUnit[UnitID], in byJob[JobID] and in
//     the deadline heap, exactly once each, and counted once in
//     perWorker[WorkerID]; End removes it from all of them.
//   - A lease id is signed: it carries an HMAC of (id prefix, unit, worker)
//     under the manager's key. Signed answers whether this coordinator (any
//     run of it sharing the key) granted that unit to that worker under that
//     id, in O(1) and without remembering it, so a result or heartbeat after
//     a restart or an expiry is checked against who really held the unit,
//     and a made-up id is refused without a search.
package lease

import (
	"container/heap"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Lease is the right of one worker to compute one unit until Deadline.
type Lease struct {
	ID       string
	UnitID   string
	JobID    string
	WorkerID string
	Granted  time.Time
	Deadline time.Time
}

// Manager holds the live leases.
type Manager struct {
	duration time.Duration
	prefix   string
	key      []byte
	seq      uint64
	leases   map[string]*entry
	byUnit   map[string]map[string]*entry
	byJob    map[string]map[string]*entry
	// perWorker counts each worker's live leases (no entry at 0), so the
	// core caps them in O(1).
	perWorker map[string]int
	expiry    deadlines
}

type entry struct {
	Lease
	index int // in the deadline heap
}

// New returns a Manager whose leases last d without a heartbeat. Lease ids
// start with prefix, which should differ between coordinator runs so that a
// lease from before a restart is recognisably not live; key signs them and
// should be the same across runs (it is kept in the store).
func New(d time.Duration, prefix string, key []byte) *Manager {
	if d <= 0 {
		panic("lease: non-positive duration")
	}
	if strings.ContainsRune(prefix, '-') {
		panic("lease: prefix contains '-'")
	}
	return &Manager{
		duration: d,
		prefix:   prefix,
		key:      append([]byte(nil), key...),
		leases:   make(map[string]*entry),
		byUnit:   make(map[string]map[string]*entry),
		byJob:    make(map[string]map[string]*entry),

		perWorker: make(map[string]int),
	}
}

// Duration is how long a lease lasts without a heartbeat.
func (m *Manager) Duration() time.Duration { return m.duration }

// Len is the number of live leases.
func (m *Manager) Len() int { return len(m.leases) }

// macLen is the signature's length in bytes (128 bits: a forger's chance
// of guessing one is 2^-128 per try).
const macLen = 16

func (m *Manager) sign(base, unitID, workerID string) string {
	h := hmac.New(sha256.New, m.key)
	h.Write([]byte(base))
	h.Write([]byte{0})
	h.Write([]byte(unitID))
	h.Write([]byte{0})
	h.Write([]byte(workerID))
	return hex.EncodeToString(h.Sum(nil)[:macLen])
}

// Signed reports whether id is a lease id this manager's key issued for
// unitID to workerID (live or not).
func (m *Manager) Signed(id, unitID, workerID string) bool {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || len(id)-i-1 != 2*macLen {
		return false
	}
	want := m.sign(id[:i], unitID, workerID)
	return hmac.Equal([]byte(id[i+1:]), []byte(want))
}

// Grant creates a new lease of unitID (of job jobID) for workerID.
func (m *Manager) Grant(unitID, jobID, workerID string, now time.Time) Lease {
	m.seq++
	base := m.prefix + "-" + strconv.FormatUint(m.seq, 10)
	return m.add(base+"-"+m.sign(base, unitID, workerID), unitID, jobID, workerID, now)
}

// Adopt re-creates a lease under an id the worker already holds (issued by
// an earlier coordinator run, or expired a moment ago). The caller checks
// Signed first. It replaces any live lease with that id.
func (m *Manager) Adopt(id, unitID, jobID, workerID string, now time.Time) Lease {
	m.End(id)
	return m.add(id, unitID, jobID, workerID, now)
}

func (m *Manager) add(id, unitID, jobID, workerID string, now time.Time) Lease {
	e := &entry{Lease: Lease{ID: id, UnitID: unitID, JobID: jobID, WorkerID: workerID, Granted: now, Deadline: now.Add(m.duration)}}
	m.leases[id] = e
	index(m.byUnit, unitID, e)
	index(m.byJob, jobID, e)
	m.perWorker[workerID]++
	heap.Push(&m.expiry, e)
	return e.Lease
}

func index(idx map[string]map[string]*entry, key string, e *entry) {
	s := idx[key]
	if s == nil {
		s = make(map[string]*entry)
		idx[key] = s
	}
	s[e.ID] = e
}

func unindex(idx map[string]map[string]*entry, key string, id string) {
	if s := idx[key]; s != nil {
		delete(s, id)
		if len(s) == 0 {
			delete(idx, key)
		}
	}
}

// Get returns a live lease.
func (m *Manager) Get(id string) (Lease, bool) {
	e, ok := m.leases[id]
	if !ok {
		return Lease{}, false
	}
	return e.Lease, true
}

// Extend moves the deadline of a live lease held by workerID to now plus the
// lease duration. It fails for an unknown lease or another worker's lease.
// A deadline never moves backwards.
func (m *Manager) Extend(id, workerID string, now time.Time) (Lease, bool) {
	e, ok := m.leases[id]
	if !ok || e.WorkerID != workerID {
		return Lease{}, false
	}
	if d := now.Add(m.duration); d.After(e.Deadline) {
		e.Deadline = d
		heap.Fix(&m.expiry, e.index)
	}
	return e.Lease, true
}

// End removes a lease (result submitted, lease released, job over).
func (m *Manager) End(id string) (Lease, bool) {
	e, ok := m.leases[id]
	if !ok {
		return Lease{}, false
	}
	delete(m.leases, id)
	unindex(m.byUnit, e.UnitID, id)
	unindex(m.byJob, e.JobID, id)
	if m.perWorker[e.WorkerID]--; m.perWorker[e.WorkerID] <= 0 {
		delete(m.perWorker, e.WorkerID)
	}
	heap.Remove(&m.expiry, e.index)
	return e.Lease, true
}

// ForUnit returns the live leases of a unit.
func (m *Manager) ForUnit(unitID string) []Lease { return list(m.byUnit[unitID]) }

// ForJob returns the live leases of a job.
func (m *Manager) ForJob(jobID string) []Lease { return list(m.byJob[jobID]) }

// All returns every live lease.
func (m *Manager) All() []Lease {
	out := make([]Lease, 0, len(m.leases))
	for _, e := range m.leases {
		out = append(out, e.Lease)
	}
	return out
}

// CountWorker is the number of live leases a worker holds.
func (m *Manager) CountWorker(workerID string) int { return m.perWorker[workerID] }

// CountJob is the number of live leases of a job.
func (m *Manager) CountJob(jobID string) int { return len(m.byJob[jobID]) }

func list(s map[string]*entry) []Lease {
	out := make([]Lease, 0, len(s))
	for _, e := range s {
		out = append(out, e.Lease)
	}
	return out
}

// Expire removes and returns every lease whose deadline is not after now,
// earliest first. It costs O(k log n) for k expired leases.
func (m *Manager) Expire(now time.Time) []Lease {
	var out []Lease
	for len(m.expiry) > 0 && !m.expiry[0].Deadline.After(now) {
		e := m.expiry[0]
		out = append(out, e.Lease)
		m.End(e.ID)
	}
	return out
}

// deadlines is a min-heap of live leases by deadline.
type deadlines []*entry

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].Deadline.Before(d[j].Deadline) }
func (d deadlines) Swap(i, j int) {
	d[i], d[j] = d[j], d[i]
	d[i].index, d[j].index = i, j
}
func (d *deadlines) Push(x any) {
	e := x.(*entry)
	e.index = len(*d)
	*d = append(*d, e)
}
func (d *deadlines) Pop() any {
	old := *d
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*d = old[:len(old)-1]
	e.index = -1
	return e
}
