// Package match plays chess games between engines and runs matches,
// SPRTs and tournaments of them on one machine: the game loop with real
// clocks, the rules of a game's end and adjudication, opening books,
// PGN, and the statistics of the results. The cluster runs the same code
// on its workers (a batch of game pairs is a Run); the coordinator only
// adds the pairs up.
//
// Where to start reading:
//   - Player (player.go): one side of a game, and the contract the game
//     loop relies on (NewGame, Think, Quit, and the errors that end a
//     game). UCIPlayer (uci.go) and XboardPlayer (xboard.go) drive engine
//     processes through enginehost/protocol, the one place that speaks
//     UCI and xboard; match/builtin is the embedded engine in process.
//     EngineConfig (engineconfig.go) says how to start one; NewPlayer
//     starts it.
//   - PlayGame (game.go): one game from an Opening under Limits
//     (limits.go), with clocks, incidents (crashes, time losses, illegal
//     moves), adjudication (adjudicator.go, tbadjudicate.go) and a
//     GameRecord that WritePGN (pgn.go) writes.
//   - Run (runner.go): a match or SPRT of two engines in game pairs (each
//     opening with colours swapped) over concurrent slots (slots.go);
//     Totals hold the pentanomial and W/D/L counts the SPRT (package
//     sprt) reads. The invariants are at the top of runner.go.
//   - Tournament (tournament.go): several engines, scheduled by Schedule
//     (schedule.go: round robin or gauntlet), with a RatingTable
//     (rating.go).
//   - Book (book.go): EPD and PGN openings, ordered and repeated as the
//     match asks (order.go, mt19937.go for fastchess's shuffles).
//
// Nothing here knows the cluster: specs, wire forms and the workers are
// floors above (spec/matchspec, worker).
package match
