// Package engine is Arbiter's chess library: the board, legal move
// generation, perft, and the notations (FEN, EPD, UCI moves, SAN). The
// embedded engine that plays is built on it in the packages below
// (search, eval, nnue, syzygy, uci); the match runner, verify, datagen
// and the coordinator use it to check every move an engine sends.
//
// Where to start reading:
//   - Position (position.go): a plain value of bitboards — copy it to keep
//     a parent (copy-make). Its invariants are at the top of the file.
//     StartPosition and ParseFEN (fen.go) make one, MakeMove plays a
//     Move (move.go).
//   - Move generation (movegen.go): GenerateMoves into a MoveList,
//     LegalMoves, IsLegal; Chess960 castling is king-takes-rook.
//   - Notation (notation.go): UCIMove/ParseUCIMove, SAN/ParseSAN; a bad
//     move is a *MoveError naming it. The rules of a game's end
//     (checkmate, stalemate, insufficient material) are in rules.go.
//   - Perft (perft.go): Perft for a count, RunPerft for divide, extended
//     statistics and progress, PerftTable (perfttable.go) for the hash of
//     transpositions; Count (count.go) is a total past 2^64, exact.
//     perft_gen.go is generated (go generate, engine/internal/perftgen).
//   - EPD (epd.go): perft suites with their known counts.
//
// The subpackages: search (the alpha-beta search and its UCI options),
// eval (the hand-written evaluation and its tunable weights), nnue (the
// net that evaluates by default), syzygy (tablebase probes), uci (the
// embedded engine's UCI front end: the other side of
// enginehost/protocol).
package engine
