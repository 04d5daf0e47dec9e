package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// Unit is the piece of work the cluster hands out: one engine-under-test
// query. A worker that has the engine runs it with a Pool and returns the
// Divide; the descent (Verify) stays on the client or the coordinator and
// issues the next units from the answers.
type Unit struct {
	Engine  EngineSpec    `json:"engine"`
	Query   Query         `json:"query"`
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Pool keeps one running engine per spec (and timeout) so that a worker
// answering many units of one verification does not restart the engine
// for each.
type Pool struct {
	mu   sync.Mutex
	engs map[string]Engine
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{engs: map[string]Engine{}} }

// Run answers u with the pool's engine for u.Engine, starting it if needed.
func (p *Pool) Run(ctx context.Context, u Unit) (Divide, error) {
	key, _ := json.Marshal(struct {
		S EngineSpec
		T time.Duration
	}{u.Engine, u.Timeout})
	p.mu.Lock()
	eng, ok := p.engs[string(key)]
	if !ok {
		var err error
		eng, err = Open(ctx, u.Engine, u.Timeout)
		if err != nil {
			p.mu.Unlock()
			return Divide{}, err
		}
		p.engs[string(key)] = eng
	}
	p.mu.Unlock()
	return eng.Divide(ctx, u.Query)
}

// Close stops every engine of the pool.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.engs {
		e.Close()
		delete(p.engs, k)
	}
	return nil
}

// RunUnit answers one unit with a fresh engine (started and stopped here).
func RunUnit(ctx context.Context, u Unit) (Divide, error) {
	eng, err := Open(ctx, u.Engine, u.Timeout)
	if err != nil {
		return Divide{}, err
	}
	defer eng.Close()
	return eng.Divide(ctx, u.Query)
}

// Counts are exact 128-bit integers; JSON carries them as decimal strings
// (a float64 would round past 2^53).

type divideLineJSON struct {
	Move  string `json:"move"`
	Nodes string `json:"nodes"`
}

type divideJSON struct {
	Lines []divideLineJSON `json:"lines"`
	Total string           `json:"total"`
}

// MarshalJSON writes the divide with counts as decimal strings.
func (d Divide) MarshalJSON() ([]byte, error) {
	j := divideJSON{Lines: make([]divideLineJSON, 0, len(d.Lines)), Total: d.Total.String()}
	for _, l := range d.Lines {
		j.Lines = append(j.Lines, divideLineJSON{l.Move, l.Nodes.String()})
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Divide) UnmarshalJSON(b []byte) error {
	var j divideJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, ok := engine.ParseCount(j.Total)
	if !ok {
		return fmt.Errorf("divide total %q is not a count", j.Total)
	}
	*d = Divide{Total: t}
	for _, l := range j.Lines {
		n, ok := engine.ParseCount(l.Nodes)
		if !ok {
			return fmt.Errorf("divide line %s: %q is not a count", l.Move, l.Nodes)
		}
		d.Lines = append(d.Lines, DivideLine{Move: l.Move, Nodes: n})
	}
	return nil
}

// PoolEngine presents a Pool and a spec as an Engine, so that Verify can
// run on units (the shape a cluster client will take: replace Run with
// "submit the unit, wait for its Divide").
type PoolEngine struct {
	Pool    *Pool
	Spec    EngineSpec
	Timeout time.Duration
}

func (e PoolEngine) Divide(ctx context.Context, q Query) (Divide, error) {
	return e.Pool.Run(ctx, Unit{Engine: e.Spec, Query: q, Timeout: e.Timeout})
}
func (e PoolEngine) Name() string { return e.Spec.String() }
func (e PoolEngine) Close() error { return nil }
