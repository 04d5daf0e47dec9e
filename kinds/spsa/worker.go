package spsa

// The SPSA kind's worker side: a tune's batches are game pairs, which the
// runner in worker/gamepairs plays (the skeleton's worker side, as
// coordinator/gamepair is its coordinator side; the test kind imports it
// too). Importing it registers that runner, so a worker program with this
// kind offers the game-pair capabilities.

import _ "github.com/arbiter-chess/arbiter/worker/gamepairs" // the runner of GamePairBatch units
