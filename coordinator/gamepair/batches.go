package gamepair

import "time"

// Batches is which batches of a job are out, for a workload that hands
// them out in order: re-opened batches first (lost leases, releases), then
// fresh ones from the lowest never handed out. next skips batches that are
// stored or leased (a lease adopted ahead of it after a restart, a batch
// counted from a late result), so it never loops over indexes that were not
// really issued, and each index is passed once. Nothing a peer sends is a
// loop bound: an index is only looked up. The range is fixed when the
// tracker is made (a test's games, a tune's pairs, testview.MaxPairs worth of
// batches for an SPRT without a cap on games) and never grows, so an index
// outside it is refused (InRange) whatever the job. Both game workloads
// keep one per running job (Job.Batches); a finished job keeps none. Not
// safe for concurrent use.
type Batches struct {
	total  int            // indexes are [0, total)
	stored map[int]bool   // counted, or held by a stored row
	open   map[int]Holder // leased
	parked map[int]bool   // held for a replay by another identity (CrossCheck): not free, not counted
	retry  []int          // re-opened, served before fresh ones
	next   int            // the lowest index never looked at by Take
}

// Holder is the worker holding a batch's lease.
type Holder struct {
	Worker  string
	Granted time.Time
}

// NewBatches tracks batches [0, total).
func NewBatches(total int) *Batches {
	return &Batches{total: total, stored: map[int]bool{}, open: map[int]Holder{}, parked: map[int]bool{}}
}

// Total is the number of batches.
func (b *Batches) Total() int { return b.total }

// InRange reports whether idx is a batch of the job.
func (b *Batches) InRange(idx int) bool { return idx >= 0 && idx < b.total }

// Stored reports whether batch idx is stored.
func (b *Batches) Stored(idx int) bool { return b.stored[idx] }

// Free reports whether batch idx is neither stored, parked nor leased.
func (b *Batches) Free(idx int) bool {
	if b.stored[idx] || b.parked[idx] {
		return false
	}
	_, leased := b.open[idx]
	return !leased
}

// Available reports whether a batch can be leased, dropping stale entries
// from the front of the retry list and moving next over batches that are
// taken.
func (b *Batches) Available() bool {
	for len(b.retry) > 0 && !b.Free(b.retry[0]) {
		b.retry = b.retry[1:]
	}
	if len(b.retry) > 0 {
		return true
	}
	for b.next < b.total && !b.Free(b.next) {
		b.next++
	}
	return b.next < b.total
}

// Take leases the next batch to worker.
func (b *Batches) Take(worker string, now time.Time) (int, bool) {
	if !b.Available() {
		return 0, false
	}
	var idx int
	if len(b.retry) > 0 {
		idx, b.retry = b.retry[0], b.retry[1:]
	} else {
		idx = b.next
		b.next++
	}
	b.open[idx] = Holder{Worker: worker, Granted: now}
	return idx, true
}

// Hold leases batch idx to worker (an adopted lease).
func (b *Batches) Hold(idx int, worker string, now time.Time) {
	b.open[idx] = Holder{Worker: worker, Granted: now}
}

// Holder is who holds batch idx.
func (b *Batches) Holder(idx int) (Holder, bool) {
	h, ok := b.open[idx]
	return h, ok
}

// Drop ends worker's lease on batch idx and reports whether it held it.
func (b *Batches) Drop(idx int, worker string) bool {
	if h, held := b.open[idx]; !held || h.Worker != worker {
		return false
	}
	delete(b.open, idx)
	return true
}

// Reopen puts batch idx back in line when it is free, and reports whether
// it did.
func (b *Batches) Reopen(idx int) bool {
	if !b.Free(idx) {
		return false
	}
	b.retry = append(b.retry, idx)
	return true
}

// Store marks batch idx stored (and no longer leased or parked).
func (b *Batches) Store(idx int) {
	b.stored[idx] = true
	delete(b.open, idx)
	delete(b.parked, idx)
}

// Unstore forgets that batch idx is stored (its row was purged): Reopen
// puts it back in line.
func (b *Batches) Unstore(idx int) { delete(b.stored, idx) }

// Park holds batch idx, whose result is in but not counted, out of the
// hand-out until Unpark or Store: its replays are leased by CrossCheck,
// not by Take.
func (b *Batches) Park(idx int) {
	b.parked[idx] = true
	delete(b.open, idx)
}

// Parked reports whether batch idx is parked.
func (b *Batches) Parked(idx int) bool { return b.parked[idx] }

// Unpark ends the hold of Park; the batch is free again (Reopen puts it
// back in line).
func (b *Batches) Unpark(idx int) { delete(b.parked, idx) }

// Leased is the number of batches leased now (none for nil: a finished
// job keeps no tracker).
func (b *Batches) Leased() int {
	if b == nil {
		return 0
	}
	return len(b.open)
}

// Workers is the number of workers holding a batch now (none for nil).
func (b *Batches) Workers() int {
	if b == nil {
		return 0
	}
	seen := make(map[string]bool, len(b.open))
	for _, h := range b.open {
		seen[h.Worker] = true
	}
	return len(seen)
}

// Position is where the hand-out stands, for tests and logs: how many
// batches are stored, how many re-opened ones wait, and the lowest index
// never looked at.
func (b *Batches) Position() (stored, reopened, next int) {
	return len(b.stored), len(b.retry), b.next
}

// Resize changes the range to [0, total) (a test's new game cap). The
// caller keeps total at or above every index handed out (Position's next).
func (b *Batches) Resize(total int) {
	if total >= b.next {
		b.total = total
	}
}
