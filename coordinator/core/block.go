package core

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// Blocking workers. An admin blocks a worker (by id) or an identity (every
// worker it registers, now and later): a blocked worker gets no more work
// and loses the leases it holds (their units are offered to others) until
// it is unblocked. Blocks are kept in the store's meta table, so they
// survive a restart and every coordinator on a shared PostgreSQL store
// reads them at Load.

// Block is one blocked worker or identity.
type Block struct {
	WorkerID string    `json:"worker_id,omitempty"`
	Identity string    `json:"identity,omitempty"`
	Reason   string    `json:"reason"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}

func (b Block) key() string {
	if b.WorkerID != "" {
		return "worker:" + b.WorkerID
	}
	return "identity:" + b.Identity
}

// metaStore is the part of the store blocks are kept in.
type metaStore interface {
	Meta(ctx context.Context, key string) ([]byte, error)
	PutMeta(ctx context.Context, key string, value []byte) error
}

// blocksKey is the meta key of the blocks (a JSON list).
const blocksKey = "core_blocks"

// MaxBlocks bounds the blocks kept.
const MaxBlocks = 10000

// loadBlocks reads the stored blocks. Caller holds no lock.
func (c *Core) loadBlocks(ctx context.Context) error {
	ms, ok := c.store.(metaStore)
	if !ok {
		return nil
	}
	raw, err := ms.Meta(ctx, blocksKey)
	if err != nil || len(raw) == 0 {
		return err
	}
	var list []Block
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("core: stored blocks: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocked = map[string]Block{}
	for _, b := range list {
		c.blocked[b.key()] = b
	}
	return nil
}

// blockOf returns why worker w may get no work ("" when it may). Caller
// holds mu.
func (c *Core) blockOf(w *Worker) (Block, bool) {
	if b, ok := c.blocked["worker:"+w.ID]; ok {
		return b, true
	}
	b, ok := c.blocked["identity:"+w.Owner]
	return b, ok
}

// Blocked lists the blocks, workers first, by id and name.
func (c *Core) Blocked() []Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blockList()
}

func (c *Core) blockList() []Block {
	out := make([]Block, 0, len(c.blocked))
	for _, b := range c.blocked {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// BlockedWhy returns why worker id gets no work ("" when it is not
// blocked), for pages.
func (c *Core) BlockedWhy(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.workers[id]
	if w == nil {
		return ""
	}
	if b, ok := c.blockOf(w); ok {
		who := "worker"
		if b.WorkerID == "" {
			who = "identity " + b.Identity
		}
		return fmt.Sprintf("%s blocked by %s: %s", who, b.By, b.Reason)
	}
	return ""
}

// SetBlock blocks (or, with blocked false, unblocks) worker workerID or
// identity name — exactly one — on behalf of an admin, and returns the
// blocks after the change. A blocked worker's leases end at once.
func (c *Core) SetBlock(ctx context.Context, caller identity.Identity, workerID, name string, blocked bool, reason string) ([]Block, error) {
	if !caller.IsAdmin() {
		return nil, wrongRole(caller, "block workers")
	}
	if (workerID == "") == (name == "") {
		return nil, apierr.Invalid("give a worker id or an identity (exactly one)")
	}
	if len(reason) > MaxNameBytes || len(workerID) > MaxNameBytes || len(name) > MaxNameBytes {
		return nil, apierr.Invalid("worker id, identity and reason: at most %d bytes each", MaxNameBytes)
	}
	ms, ok := c.store.(metaStore)
	if !ok {
		return nil, apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "this coordinator keeps no blocks (no store)")
	}
	b := Block{WorkerID: workerID, Identity: name, Reason: reason, By: caller.Name, At: c.cfg.Now().UTC()}
	c.blockMu.Lock() // one change at a time, stored before it applies
	defer c.blockMu.Unlock()
	c.mu.Lock()
	if workerID != "" && c.workers[workerID] == nil {
		c.mu.Unlock()
		return nil, apierr.New(apierr.NotFound, apierr.ReasonBadInput, "unknown worker %s (arbiter workers lists them)", apierr.Q(workerID))
	}
	next := make(map[string]Block, len(c.blocked)+1)
	for k, v := range c.blocked {
		next[k] = v
	}
	if blocked {
		if len(next) >= MaxBlocks {
			c.mu.Unlock()
			return nil, apierr.New(apierr.ResourceExhausted, apierr.ReasonBadInput, "%d blocks kept already", MaxBlocks)
		}
		next[b.key()] = b
	} else if _, ok := next[b.key()]; !ok {
		c.mu.Unlock()
		return nil, apierr.New(apierr.NotFound, apierr.ReasonBadInput, "%s is not blocked", b.key())
	} else {
		delete(next, b.key())
	}
	list := make([]Block, 0, len(next))
	for _, v := range next {
		list = append(list, v)
	}
	c.mu.Unlock()
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	if err := ms.PutMeta(ctx, blocksKey, raw); err != nil {
		return nil, apierr.Store(err)
	}
	c.mu.Lock()
	c.blocked = next
	if blocked {
		c.endBlockedLeases()
	}
	out := c.blockList()
	c.mu.Unlock()
	action, detail := "worker.unblock", ""
	if blocked {
		action, detail = "worker.block", reason
	}
	c.recordAudit(ctx, caller, action, b.key(), detail)
	c.wake.signal()
	return out, nil
}

// endBlockedLeases ends every lease a blocked worker holds; its units are
// offered again. Caller holds mu.
func (c *Core) endBlockedLeases() {
	for _, l := range c.leases.All() {
		w := c.workers[l.WorkerID]
		if w == nil {
			continue
		}
		if _, ok := c.blockOf(w); !ok {
			continue
		}
		c.leases.End(l.ID)
		if wl := c.workloadOf(l); wl != nil {
			wl.Ended(toLease(l), End{Reason: "worker blocked by an admin"})
		}
	}
}
