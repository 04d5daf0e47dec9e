// Package layers declares the floors of the tree, lowest first, and its
// test holds every package to them: a package imports only from its own
// floor or below (tests may also use testing/). This table is the one
// place the layering is written; docs/layout.md explains it.
package layers

// Floors are the tree's top-level folders by floor, lowest first. A
// folder not named here is refused by the test, so a new folder gets a
// floor when it is made.
var Floors = [][]string{
	// Foundation: no chess, no engines, no jobs.
	{"proto", "base"},
	// The embedded engine, the statistics, and running engine processes.
	{"engine", "sprt", "enginehost"},
	// What the work is: games and matches, finding another engine's
	// move-generator bug, tuning, self-play data, training nets.
	{"match", "verify", "spsa", "datagen", "train"},
	// How the work is described: specs built from flags and carried on
	// the wire, and their conversions to and from the proto.
	{"spec", "wire"},
	// The roles: the coordinator, the worker, and the client that talks
	// to a coordinator; each keeps a registry a kind of job plugs into.
	{"coordinator", "worker", "client"},
	// The kinds of job: one folder each, holding every side of the kind
	// (its coordinator workload, worker runner, report, page, commands),
	// and kinds/install, the one list of them.
	{"kinds"},
	// Local commands: a farm in one process, perft, verify, SPRT and the
	// fastchess-compatible command line.
	{"local"},
	// Programs: the arbiter binary, examples and development scripts.
	{"cmd", "examples", "scripts"},
}

// Testing is the folder of helpers that only tests import: test servers
// (PostgreSQL, git), engines with bugs put in on purpose, tablebase
// fixtures. A package under it may import any floor.
const Testing = "testing"
