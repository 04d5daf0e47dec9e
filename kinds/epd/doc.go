// Package epd is the EPD test-suite kind: tactical and positional suites
// (WAC, Bratko-Kopec, Kaufman, Silent but Deadly, STS) searched by one or
// more engines under one limit, each position solved when the engine's
// move is among the suite's best moves (bm) and none of its avoid moves
// (am). It holds the kind's core: the suite parser, the solver that
// drives a match.Player and reads its search reports for the time and
// depth to solve, the local command (`arbiter epd`), and the pure parts of
// the farm's contract (spec validation, batches, the exact merge, the
// per-engine table), and the registrations that put the kind on the farm:
// the coordinator workload and store schema (coordinator.go), the worker
// runner (worker.go), the commands (register.go), the status report and
// its --json detail (report.go, detail.go, detail.schema.json), the page
// (page.go, templates/) and the result block (block.go).
//
// Invariants:
//   - A suite is refused whole when any line is: every refused line is
//     named with its file and line number and what is wrong.
//   - Moves are compared as engine.Move values in the position, never as
//     text: "e1g1" and "e1h1" are one castling move, SAN "Qd1 +" and UCI
//     "d6d1" the same queen move.
//   - A result counts once per (engine, position): a batch's results are
//     keyed by batch index and a duplicate is compared, never added.
package epd
