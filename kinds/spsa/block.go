package spsa

// The result block of a tune (`arbiter status JOB --block`, the API's
// /block, the page, the webhooks), registered for the family tune
// (resultblock.Register): Fishtest's two SPSA lines, and in OpenBench's
// layout the values reached (OpenBench has no block for tunes; its users
// paste the values).

import (
	"fmt"
	"math"
	"strconv"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

func init() { resultblock.Register(jobkind.FamilyTune, tuneBlock) }

func tuneBlock(j *arbiterv1.Job, style resultblock.Style) []string {
	spec, sp := j.GetSpsa(), j.GetSpsaProgress()
	lines := []string{
		fmt.Sprintf("%d/%d iterations", sp.GetUpdates(), sp.GetBatchesTotal()),
		fmt.Sprintf("%d/%d games played", sp.GetGames(), 2*spec.GetPairs()),
	}
	if style == resultblock.Fishtest {
		return lines
	}
	lines = []string{
		fmt.Sprintf("SPSA  | %s %s", resultblock.TimeControl(spec.GetTimeControl()), resultblock.ThreadsHash(spec.GetEngine())),
		fmt.Sprintf("Iters | %d/%d", sp.GetUpdates(), sp.GetBatchesTotal()),
		fmt.Sprintf("Games | N: %d W: %d L: %d D: %d", sp.GetGames(), sp.GetWins(), sp.GetLosses(), sp.GetDraws()),
	}
	for _, p := range sp.GetParams() {
		v := strconv.FormatFloat(p.GetCurrent(), 'f', 4, 64)
		if !p.GetIsFloat() {
			v = strconv.FormatInt(int64(math.Round(p.GetCurrent())), 10)
		}
		lines = append(lines, fmt.Sprintf("%s, %s", p.GetName(), v))
	}
	return lines
}
