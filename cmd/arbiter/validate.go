package main

// The defaults several commands share.

// Default perft hash tables, one per purpose (README, "Hash tables"):
// a machine that serves as a worker gets a table that pays off at the
// depths a cluster is asked for; a one-off perft on this machine gets
// none unless asked (kinds/perft's localHashMB), since below depth 7 the
// table costs more to clear than it saves.
const (
	// workerHashMB is a worker machine's table: arbiter worker's, and
	// arbiter up's divided among its local workers.
	workerHashMB = 256
)
