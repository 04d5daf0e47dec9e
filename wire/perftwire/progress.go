package perftwire

// RootCount is one root move's count so far.
type RootCount struct {
	Move string
	// Nodes counted below the move so far (settled units), decimal; the
	// move's final count once Complete.
	Nodes string
	// Complete is set when every position below the move is settled.
	Complete bool
	// Open is the number of positions below the move not settled yet.
	Open int
}

// Progress is what a perft job's page shows beyond its snapshot: the
// answer of the perft workload's Progress (kinds/perft).
type Progress struct {
	// Divide per root move in the order of the job's root moves.
	Divide []RootCount
	// NodesPerSecond is the rate of settled nodes since this coordinator
	// began tracking the job (0 when finished or unknown).
	NodesPerSecond float64
}
