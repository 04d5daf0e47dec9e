// Package lease tracks work leases: who holds which unit until when.
//
// It is pure bookkeeping driven by the clock the caller passes in; it does no
// I/O and starts no goroutines, so the coordinator decides when to expire and
// tests can step time by hand. A Manager is not safe for concurrent use; the
// coordinator guards it with its own lock.
package lease

import (
	"fmt"
	"time"
)

// Lease is the right of one worker to compute one unit until Deadline.
type Lease struct {
	ID       string
	UnitID   string
	WorkerID string
	Granted  time.Time
	Deadline time.Time
}

// Manager holds the live leases.
type Manager struct {
	duration time.Duration
	prefix   string
	seq      uint64
	leases   map[string]*Lease
	byUnit   map[string]map[string]*Lease
}

// New returns a Manager whose leases last d without a heartbeat. Lease ids
// start with prefix, which should differ between coordinator runs so that a
// lease from before a restart is recognisably unknown.
func New(d time.Duration, prefix string) *Manager {
	if d <= 0 {
		panic("lease: non-positive duration")
	}
	return &Manager{
		duration: d,
		prefix:   prefix,
		leases:   make(map[string]*Lease),
		byUnit:   make(map[string]map[string]*Lease),
	}
}

// Duration is how long a lease lasts without a heartbeat.
func (m *Manager) Duration() time.Duration { return m.duration }

// Len is the number of live leases.
func (m *Manager) Len() int { return len(m.leases) }

// Grant creates a new lease of unitID for workerID.
func (m *Manager) Grant(unitID, workerID string, now time.Time) Lease {
	m.seq++
	return m.add(fmt.Sprintf("%s-%d", m.prefix, m.seq), unitID, workerID, now)
}

// Adopt re-creates a lease under an id the worker already holds (issued by
// an earlier coordinator run, or expired a moment ago). It replaces any live
// lease with that id.
func (m *Manager) Adopt(id, unitID, workerID string, now time.Time) Lease {
	m.End(id)
	return m.add(id, unitID, workerID, now)
}

func (m *Manager) add(id, unitID, workerID string, now time.Time) Lease {
	l := &Lease{ID: id, UnitID: unitID, WorkerID: workerID, Granted: now, Deadline: now.Add(m.duration)}
	m.leases[id] = l
	u := m.byUnit[unitID]
	if u == nil {
		u = make(map[string]*Lease)
		m.byUnit[unitID] = u
	}
	u[id] = l
	return *l
}

// Get returns a live lease.
func (m *Manager) Get(id string) (Lease, bool) {
	l, ok := m.leases[id]
	if !ok {
		return Lease{}, false
	}
	return *l, true
}

// Extend moves the deadline of a live lease held by workerID to now plus the
// lease duration. It fails for an unknown lease or another worker's lease.
// A deadline never moves backwards.
func (m *Manager) Extend(id, workerID string, now time.Time) (Lease, bool) {
	l, ok := m.leases[id]
	if !ok || l.WorkerID != workerID {
		return Lease{}, false
	}
	if d := now.Add(m.duration); d.After(l.Deadline) {
		l.Deadline = d
	}
	return *l, true
}

// End removes a lease (result submitted, lease released, job cancelled).
func (m *Manager) End(id string) (Lease, bool) {
	l, ok := m.leases[id]
	if !ok {
		return Lease{}, false
	}
	delete(m.leases, id)
	if u := m.byUnit[l.UnitID]; u != nil {
		delete(u, id)
		if len(u) == 0 {
			delete(m.byUnit, l.UnitID)
		}
	}
	return *l, true
}

// ForUnit returns the live leases of a unit.
func (m *Manager) ForUnit(unitID string) []Lease {
	u := m.byUnit[unitID]
	out := make([]Lease, 0, len(u))
	for _, l := range u {
		out = append(out, *l)
	}
	return out
}

// Expire removes and returns every lease whose deadline is not after now.
func (m *Manager) Expire(now time.Time) []Lease {
	var out []Lease
	for id, l := range m.leases {
		if !l.Deadline.After(now) {
			out = append(out, *l)
			m.End(id)
		}
	}
	return out
}
