package engine

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// MaxPerftDepth is the deepest perft accepted (deeper runs would not finish
// in any lifetime, and the ply stack is fixed).
const MaxPerftDepth = 40

//go:generate go run ./internal/perftgen

// perftCore is one thread's node counter: the generated per-side code of
// perft_gen.go on perftBoards, with a move list per ply above the last two
// and the thread's share of the table counters. With a slice set, it counts
// only the part of the tree the slice names (perftcounter.go).
type perftCore struct {
	castle perftCastling
	table  *PerftTable
	stab   *PerftStatsTable // for statistics (perftstats.go), or nil
	stats  PerftTableStats
	sink   uint64        // keeps the bucket-touching loads of expand alive
	harm   perftHarmless // perft2's, one at a time
	// slice restricts counting to one slice of the tree; salt1 and salt2
	// set apart the table entries of counts so restricted (zero: none).
	slice        PerftSlice
	salt1, salt2 uint64
	// keys[ply] holds the table hashes of the children at ply (with a
	// table only).
	keys  [][maxPerftMoves][2]uint64
	lists [MaxPerftDepth]perftMoveList
}

// maxPerftMoves bounds the legal moves of a position (218 is the most known).
const maxPerftMoves = 256

// newPerftCore returns a counter for p and the positions below it, down to
// depth plies.
func newPerftCore(p *Position, t *PerftTable, depth int) *perftCore {
	c := &perftCore{castle: newPerftCastling(p), table: t}
	if t != nil && depth > 2 {
		c.keys = make([][maxPerftMoves][2]uint64, depth-2)
	}
	return c
}

// flush adds the thread's table counters to the table's and starts them
// again from zero.
func (c *perftCore) flush() {
	if c.table != nil {
		c.table.addStats(c.stats)
	}
	c.stats = PerftTableStats{}
}

// perft counts the leaves depth plies below b (depth >= 1), through the
// table when there is one.
func (c *perftCore) perft(b *perftBoard, depth int) uint64 { return c.perftAt(b, depth, 0) }

// perftAt is perft for a board at ply (which indexes the move lists and
// key arrays of the plies below it).
func (c *perftCore) perftAt(b *perftBoard, depth, ply int) uint64 {
	if depth < 2 || c.table == nil {
		return c.expand(b, depth, ply)
	}
	h1, h2 := c.table.hash(b)
	c.stats.Probes++
	if n, ok := c.table.probe(h1, h2, depth); ok {
		c.stats.Hits++
		return n
	}
	n := c.expand(b, depth, ply)
	c.table.store(h1, h2, depth, n)
	c.stats.Stores++
	return n
}

// expand counts the leaves depth plies below b, which the table (if any)
// did not have; its children of depth 2 or more go through the table.
// ply indexes the move lists and key arrays.
// throughTable counts the leaves below move m of b (a node at ply with
// depth left) from the table, or by expanding the child and storing its
// count; k is the child's pair of table keys, child the caller's scratch
// board (a local one would escape to the heap through expand).
func (c *perftCore) throughTable(b *perftBoard, m perftMove, k *[2]uint64, depth, ply int, child *perftBoard) uint64 {
	c.stats.Probes++
	if cn, ok := c.table.probe(k[0], k[1], depth-1); ok {
		c.stats.Hits++
		return cn
	}
	*child = c.make(b, m)
	cn := c.expand(child, depth-1, ply+1)
	c.table.store(k[0], k[1], depth-1, cn)
	c.stats.Stores++
	return cn
}

func (c *perftCore) expand(b *perftBoard, depth, ply int) uint64 {
	switch {
	case depth == 1 && b.side == White:
		return c.countWhite(b)
	case depth == 1:
		return c.countBlack(b)
	case depth == 2 && b.side == White:
		return c.perft2White(b)
	case depth == 2:
		return c.perft2Black(b)
	case depth == 3 && c.table == nil && b.side == White:
		return c.perft3White(b)
	case depth == 3 && c.table == nil:
		return c.perft3Black(b)
	}
	ml := &c.lists[ply]
	if b.side == White {
		c.genWhite(b, ml)
	} else {
		c.genBlack(b, ml)
	}
	moves := ml.moves[:ml.n]
	var n uint64
	var child perftBoard // outside the loops, or escape analysis moves it to the heap
	if c.table == nil {
		for _, m := range moves {
			child = c.make(b, m)
			n += c.expand(&child, depth-1, ply+1)
		}
		return n
	}
	// Hash every child, then touch every child's bucket before probing
	// any: the loads miss the cache independently and overlap, where
	// probing one child after the other would wait for each miss in turn.
	keys := &c.keys[ply]
	for i, m := range moves {
		child = c.make(b, m)
		keys[i&(maxPerftMoves-1)][0], keys[i&(maxPerftMoves-1)][1] = c.table.hash(&child)
	}
	var touched uint64
	for i := range moves {
		touched += c.table.touch(keys[i&(maxPerftMoves-1)][0])
	}
	c.sink += touched
	for i, m := range moves {
		n += c.throughTable(b, m, &keys[i&(maxPerftMoves-1)], depth, ply, &child)
	}
	return n
}

// Perft counts the leaf nodes of the legal move tree depth plies deep, on
// one thread without a hash table; the last ply is bulk-counted.
func Perft(p *Position, depth int) uint64 {
	return PerftWithTable(p, depth, nil)
}

// PerftWithTable is Perft with a shared table (nil for none). Safe to call
// from many goroutines sharing t.
func PerftWithTable(p *Position, depth int, t *PerftTable) uint64 {
	if depth <= 0 {
		return 1
	}
	c := newPerftCore(p, t, depth)
	b := newPerftBoard(p)
	n := c.perft(&b, depth)
	c.flush()
	return n
}

// PerftStats are the chessprogramming-wiki perft statistics of the leaves:
// the kind of the last move played and what it did. Checks include mates.
type PerftStats struct {
	Nodes           uint64 `json:"nodes"`
	Captures        uint64 `json:"captures"`
	EnPassant       uint64 `json:"ep"`
	Castles         uint64 `json:"castles"`
	Promotions      uint64 `json:"promotions"`
	Checks          uint64 `json:"checks"`
	DiscoveryChecks uint64 `json:"discovery_checks"`
	DoubleChecks    uint64 `json:"double_checks"`
	Checkmates      uint64 `json:"checkmates"`
}

// Add adds o into s.
func (s *PerftStats) Add(o *PerftStats) {
	s.Nodes += o.Nodes
	s.Captures += o.Captures
	s.EnPassant += o.EnPassant
	s.Castles += o.Castles
	s.Promotions += o.Promotions
	s.Checks += o.Checks
	s.DiscoveryChecks += o.DiscoveryChecks
	s.DoubleChecks += o.DoubleChecks
	s.Checkmates += o.Checkmates
}

func (s *PerftStats) add(o *perftStatsRaw) {
	s.Nodes += o[PerftStatNodes]
	s.Captures += o[PerftStatCaptures]
	s.EnPassant += o[PerftStatEnPassant]
	s.Castles += o[PerftStatCastles]
	s.Promotions += o[PerftStatPromotions]
	s.Checks += o[PerftStatChecks]
	s.DiscoveryChecks += o[PerftStatDiscoveryChecks]
	s.DoubleChecks += o[PerftStatDoubleChecks]
	s.Checkmates += o[PerftStatCheckmates]
}

// PerftOptions configure RunPerft.
type PerftOptions struct {
	Threads int         // goroutines; <= 0 means all cores
	Table   *PerftTable // shared hash table, or nil
	Stats   bool        // collect PerftStats (through StatsTable, not Table)
	// StatsTable caches statistics of subtrees when Stats is set (nil:
	// none).
	StatsTable *PerftStatsTable
	// Progress, if set, is called from the worker goroutines each time a
	// piece of work finishes.
	Progress func(PerftProgress)
}

// PerftProgress tells how far a RunPerft has come: the nodes counted so far
// and how many of its pieces of work are done (for an ETA; pieces differ
// in size, so the estimate is rough).
type PerftProgress struct {
	Nodes       Count
	Done, Total int
}

// DivideEntry is the count below one root move.
type DivideEntry struct {
	Move  Move
	UCI   string
	Nodes Count
}

// PerftResult is the outcome of RunPerft.
type PerftResult struct {
	Nodes  Count
	Divide []DivideEntry    // one per legal root move, in UCI order
	Stats  *PerftStats      // when asked
	Hash   *PerftTableStats // this run's use of the table, when there is one
}

type perftTask struct {
	root  int      // index of the root move
	pos   Position // position after the task's moves
	depth int      // remaining depth at pos
}

// RunPerft computes perft of p to depth on opt.Threads goroutines, with
// divide per root move. The tree is split a few plies below the root into
// enough tasks to keep every thread busy; each task's count is exact in
// uint64 and the sums are exact 128-bit Counts. It returns ctx.Err() if ctx
// is cancelled.
func RunPerft(ctx context.Context, p Position, depth int, opt PerftOptions) (PerftResult, error) {
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	var res PerftResult
	if opt.Stats {
		res.Stats = &PerftStats{}
		opt.Table = nil
		if opt.StatsTable != nil {
			res.Hash = &PerftTableStats{}
			opt.StatsTable.NewGeneration()
		}
	} else if opt.Table != nil {
		res.Hash = &PerftTableStats{}
		opt.Table.NewGeneration()
	}
	if depth <= 0 {
		res.Nodes = CountOf(1)
		if res.Stats != nil {
			res.Stats.Nodes = 1
		}
		return res, nil
	}
	roots := p.LegalMoves()
	sort.Slice(roots, func(i, j int) bool { return p.UCIMove(roots[i]) < p.UCIMove(roots[j]) })
	res.Divide = make([]DivideEntry, len(roots))
	for i, m := range roots {
		res.Divide[i] = DivideEntry{Move: m, UCI: p.UCIMove(m)}
	}

	r := &perftRun{p: &p, depth: depth, opt: opt, res: &res}
	r.tasks = perftTasks(&p, roots, depth, threads)
	r.counts = make([]uint64, len(r.tasks))
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() { r.work(ctx) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return PerftResult{}, err
	}
	if opt.Stats && depth == 1 {
		// Depth 1: the root moves themselves are the leaves.
		core := newPerftCore(&p, nil, 1)
		b := newPerftBoard(&p)
		var s perftStatsRaw
		core.leafStats(&b, 0, &s)
		res.Stats.add(&s)
		for i := range res.Divide {
			res.Divide[i].Nodes = CountOf(1)
		}
		res.Nodes = CountOf(uint64(len(roots)))
		return res, nil
	}
	for i, t := range r.tasks {
		res.Divide[t.root].Nodes = res.Divide[t.root].Nodes.Add(r.counts[i])
	}
	for _, d := range res.Divide {
		res.Nodes = res.Nodes.AddCount(d.Nodes)
	}
	return res, nil
}

// perftTasks expands the root moves breadth-first until there are enough
// tasks to balance threads (one task a root move for one thread).
func perftTasks(p *Position, roots []Move, depth, threads int) []perftTask {
	tasks := make([]perftTask, 0, len(roots))
	for i, m := range roots {
		c := *p
		c.MakeMove(m)
		tasks = append(tasks, perftTask{root: i, pos: c, depth: depth - 1})
	}
	want := 64 * threads
	if threads == 1 {
		want = 1
	}
	for len(tasks) < want && len(tasks) > 0 && tasks[0].depth > 3 {
		var next []perftTask
		for _, t := range tasks {
			var ml MoveList
			t.pos.GenerateMoves(&ml)
			for _, m := range ml.Slice() {
				c := t.pos
				c.MakeMove(m)
				next = append(next, perftTask{root: t.root, pos: c, depth: t.depth - 1})
			}
		}
		tasks = next
	}
	return tasks
}

// perftRun is one RunPerft's work shared by its threads: each takes the
// next task (next), writes its own counts[i], and adds its statistics
// and progress to res under mu.
type perftRun struct {
	p      *Position
	depth  int
	opt    PerftOptions
	tasks  []perftTask
	counts []uint64
	next   atomic.Int64

	mu       sync.Mutex
	res      *PerftResult
	total    Count
	finished int
}

// work is one thread: it counts tasks until none is left or ctx ends,
// then adds its statistics and flushes its table buffers.
func (r *perftRun) work(ctx context.Context) {
	core := newPerftCore(r.p, r.opt.Table, r.depth)
	core.stab = r.opt.StatsTable
	var stats perftStatsRaw
	for ctx.Err() == nil {
		i := int(r.next.Add(1) - 1)
		if i >= len(r.tasks) {
			break
		}
		t := &r.tasks[i]
		var n uint64
		b := newPerftBoard(&t.pos)
		switch {
		case t.depth == 0:
			// Only when depth is 1 without statistics (which classify
			// the root's moves in RunPerft).
			n = 1
		case r.opt.Stats:
			s := core.statsAt(&b, t.depth, 0)
			stats.add(&s)
			n = s[PerftStatNodes]
		default:
			n = core.perft(&b, t.depth)
		}
		r.counts[i] = n
		if r.opt.Progress != nil {
			r.mu.Lock()
			r.total = r.total.Add(n)
			r.finished++
			snapshot := PerftProgress{Nodes: r.total, Done: r.finished, Total: len(r.tasks)}
			r.mu.Unlock()
			r.opt.Progress(snapshot)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.Stats {
		r.res.Stats.add(&stats)
	}
	if r.res.Hash != nil {
		r.res.Hash.add(core.stats)
	}
	if r.opt.Stats {
		core.flushStats()
	} else {
		core.flush()
	}
}
