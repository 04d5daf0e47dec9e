package test

// The test kind's worker side: its batches are game pairs, which the
// runner in worker/gamepairs plays (the skeleton's worker side, as
// coordinator/gamepair is its coordinator side; the SPSA kind imports it
// too). Importing it registers that runner, so a worker program with this
// kind offers the game-pair capabilities.

import _ "github.com/arbiter-chess/arbiter/worker/gamepairs" // the runner of GamePairBatch units
