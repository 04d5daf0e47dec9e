// Package syzygy probes Syzygy endgame tablebases: win/draw/loss (WDL, the
// .rtbw files) for any position with few enough pieces, and distance to
// zeroing (DTZ, the .rtbz files) for a root position.
//
// The format is Ronald de Man's (github.com/syzygy1/tb, which generates the
// files); this is a pure-Go reader written from that format and checked
// against his generator's files and against the Fathom prober. Nothing here
// uses cgo.
//
// Values follow Syzygy: WDL is from the side to move, -2 loss, -1 loss
// saved by the 50-move rule (blessed loss), 0 draw, 1 win spoiled by the
// 50-move rule (cursed win), 2 win. DTZ is in plies to the next capture or
// pawn move on a best line, signed like WDL, above 100 in magnitude for
// cursed wins and blessed losses, and may be one ply off as Syzygy documents
// (see ProbeDTZ). Neither value looks at the position's 50-move counter.
//
// Invariants:
//   - Every offset or count read from a table file is checked against the
//     file's length (or the region it must lie in) before it is used: a
//     damaged or truncated file gives an error naming the file, never a
//     panic or an out-of-range read. The only exception is a file changed on
//     disk while it is mapped, which the operating system reports as a
//     fault; table files are read-only inputs.
//   - A table is opened and checked on its first probe, once (sync.Once);
//     a table that failed keeps failing with the same error.
//   - Probes run concurrently; Close waits for probes in flight and makes
//     later probes fail, so no probe touches an unmapped file.
package syzygy
