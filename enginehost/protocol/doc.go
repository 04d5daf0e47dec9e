// Package protocol speaks UCI and xboard (CECP v2) to engine processes
// that enginehost/engineproc started: the one place in the tree that
// writes a handshake, parses an option line, an info line or a feature
// line, or runs an engine's bench. The match runner, verify, SPSA and the
// worker drive engines only through it; a test (TestOneProtocolSpeaker)
// fails when a handshake or an option-line parser appears anywhere else.
//
// Where to start reading:
//   - Conn (conn.go): a process with the protocols' line conventions —
//     commands written with one system call, lines read with a deadline,
//     a search that gets its stop command and a grace when its time is
//     up, and the two errors every caller sorts on (ErrCrash, ErrHang).
//   - UCI (uci.go): uci/uciok with id name and author and the declared
//     options, setoption by type, isready/readyok, ucinewgame,
//     position/go/bestmove (with ponder). Info (info.go) is one info line
//     parsed.
//   - Option and Options (options.go): typed options (spin, check, combo,
//     string, button) parsed once, values checked by type.
//   - Xboard (xboard.go): xboard/protover 2/feature ... done=1, options
//     declared as features, ping/pong, thinking output.
//   - Bench (bench.go): an engine's bench, on its command line or in a UCI
//     session that sets a net option first; its node count.
//
// The model is fastchess's engine layer (uci_engine.hpp and
// option_factory.hpp): one parser per line type and one typed option per
// declared option, each of which says whether a value is valid.
//
// Invariants:
//   - Nothing an engine writes is trusted as a size: option lines, vars of
//     a combo and the options of one engine are capped (maxOptions,
//     maxVars), a spin's bounds are numbers to compare with, never lengths,
//     and a line is at most engineproc's line limit.
//   - A malformed option line never panics and never vanishes: it is kept
//     in Options.Malformed with an error that quotes it.
//   - Parsing an info line allocates nothing once its Info has held a PV
//     as long (the runner parses every line of every search).
//   - Errors name the engine's input: the option and the value refused,
//     the line that could not be read, what the engine printed instead of
//     its handshake (Clues).
package protocol
