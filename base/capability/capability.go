// Package capability is the one vocabulary in which a worker says what it
// can run and a job kind says what its units need. Workers advertise these
// strings when they register (WorkerCapabilities.capabilities); the
// coordinator offers a unit only to a worker that has every capability the
// unit needs, and says which one is missing when no worker has it.
//
// Every capability string is defined here and nowhere else: a kind that
// needs a new one adds it here, and both sides use the constant.
package capability

import "strings"

// Perft work.
const (
	// Perft: the worker counts perft batches of standard chess.
	Perft = "perft"
	// Perft960: it also counts Chess960 positions.
	Perft960 = "perft960"
	// PerftSlices: it counts slices of a position's tree with the perft
	// slice deal of version 1 (engine.PerftSlice); a worker without it
	// would count whole trees.
	PerftSlices = "perft-slices-1"
	// PerftStats: it counts statistics (PerftBatch.stats).
	PerftStats = "perft-stats"
	// PerftCrossCheck: it counts a perft batch with one of its
	// --verify-engine programs (PerftBatch.cross_check_engine); one
	// without it would count with the embedded generator.
	PerftCrossCheck = "perft-cross-check"
)

// Game work.
const (
	// GamePair: the worker plays batches of game pairs (tests, tunes).
	GamePair = "game-pair"
	// Builtin: it plays the embedded engine.
	Builtin = "builtin"
	// EngineLimits: it plays each engine under its own time control
	// (EngineSpec.time_control); one without it would silently play the
	// test's.
	EngineLimits = "engine-limits"
	// Artifacts: it fetches, verifies and runs uploaded engines.
	Artifacts = "artifacts"
	// SourceBuild: it has a C/C++ toolchain and make, and builds source
	// artifacts.
	SourceBuild = "source-build"
	// Nets: it fetches a test's net (EngineSpec.net), checks its hash and
	// passes it to the engine; one without it would play the engine's own.
	Nets = "nets"
	// MovegenGate: it runs verify's movegen gate through an engine with
	// EngineSpec.movegen_gate before its first game and answers a batch
	// with the failure; one without it would play a gated test unchecked.
	MovegenGate = "movegen-gate"
	// EngineSyzygy: it gives the embedded engine its Syzygy tables
	// (EngineSpec.syzygy_pieces); one without it would play the engine
	// without tables.
	EngineSyzygy = "engine-syzygy"
	// Datagen: it plays self-play games for training data (DATAGEN
	// batches) and uploads them as shards.
	Datagen = "datagen-1"
)

// SyzygyPrefix starts the capability of a worker whose Syzygy tables
// (worker --syzygy DIR) have every table of some piece count: it
// advertises Syzygy(n) for each n from 3 to its tables' most pieces, and
// a test adjudicated by tables of n pieces needs Syzygy(n).
const SyzygyPrefix = "syzygy-pieces:"

// Syzygy is the capability of tables up to n pieces.
func Syzygy(n int) string { return SyzygyPrefix + itoa(n) }

func itoa(n int) string {
	if n < 0 || n > 9 {
		return "?"
	}
	return string(rune('0' + n))
}

// VerifyEnginePrefix starts the capability of an engine under test that a
// worker's operator made available to `arbiter verify --coordinator`.
const VerifyEnginePrefix = "verify-engine:"

// VerifyEngine is the capability a worker advertises for an engine under
// test named name.
func VerifyEngine(name string) string { return VerifyEnginePrefix + name }

// Missing returns the first of need that have lacks ("" when none does).
func Missing(need []string, have func(string) bool) string {
	for _, c := range need {
		if !have(c) {
			return c
		}
	}
	return ""
}

// Describe names a capability for a person: what a worker must offer.
func Describe(c string) string {
	if name, ok := strings.CutPrefix(c, VerifyEnginePrefix); ok {
		return "the engine under test " + name + " (arbiter worker --verify-engine)"
	}
	if n, ok := strings.CutPrefix(c, SyzygyPrefix); ok {
		return "Syzygy tables of " + n + " pieces (arbiter worker --syzygy DIR)"
	}
	return c
}
