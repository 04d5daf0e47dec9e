package worker

// The worker's cores budget (Config.Threads): a unit that starts engines
// takes, before a game, the cores its engines ask for with their Threads
// option (Host.TakeCores), waiting while running games hold them.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// coreBudget counts the cores that running games hold.
type coreBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	used int // cores taken by running games
}

// acquire takes n cores of the worker's budget (Threads), waiting for
// running games to give them back; n is capped at the budget.
func (g *coreBudget) acquire(ctx context.Context, n, budget int) bool {
	n = min(max(n, 1), budget)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	for g.used+n > budget {
		if ctx.Err() != nil {
			return false
		}
		g.cond.Wait()
	}
	g.used += n
	return true
}

func (g *coreBudget) releaseCores(n, budget int) {
	n = min(max(n, 1), budget)
	g.mu.Lock()
	g.used -= n
	if g.cond != nil {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// takeCores takes the cores one game of engines uses (the most threads
// any of them asks for) from the worker's budget; give gives them back.
func (w *Worker) takeCores(ctx context.Context, engines []*arbiterv1.EngineSpec) (give func(), err error) {
	threads := 1
	for _, e := range engines {
		threads = max(threads, threadsOf(e))
	}
	if !w.cores.acquire(ctx, threads, w.cfg.Threads) {
		return nil, errStopping
	}
	return func() { w.cores.releaseCores(threads, w.cfg.Threads) }, nil
}

// errStopping ends a unit the worker stopped before it could start.
var errStopping = errors.New("worker stopping")

// threadsOf is the number of threads a game of e uses.
func threadsOf(e *arbiterv1.EngineSpec) int {
	for k, v := range e.GetOptions() {
		if strings.EqualFold(k, "Threads") {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1
}
