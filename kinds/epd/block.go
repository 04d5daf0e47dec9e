package epd

// The result block of an EPD job (`arbiter status JOB --block`, the
// page, the webhooks): the per-engine table as aligned text, to paste
// into a pull request or a commit message. Both styles get this one
// layout: OpenBench's and Fishtest's are layouts of game statistics,
// which an EPD job has none of.

import (
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

func init() { resultblock.Register(FamilyEPD, resultBlock) }

// resultBlock is the block's lines: the suite, the state when the job is
// not done, then one line per engine. A snapshot without the results (a
// list's) gives the solved counts without the times and depths.
func resultBlock(j *arbiterv1.Job, _ resultblock.Style) []string {
	d := detailOf(j)
	if d == nil {
		return []string{fmt.Sprintf("%s %s: %s", jobkind.Of(j).Noun, j.GetJobId(), jobreport.StateName(j.GetState()))}
	}
	limit, _ := LimitOf(d.GetSpec().GetLimit())
	head := fmt.Sprintf("EPD | %s | %s", d.GetSpec().GetName(), limit)
	if n := len(d.GetSpec().GetPositions()); n > 0 {
		head += fmt.Sprintf(" | %d positions", n)
	}
	lines := []string{head}
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		lines = append(lines, fmt.Sprintf("State | %s, %d of %d batches", jobreport.StateName(j.GetState()), d.GetBatchesDone(), d.GetBatches()))
	}
	cells := [][]string{{"Engine", "Solved", "%", "Time", "Depth"}}
	if run, err := farmRunOf(j); err == nil {
		for _, r := range Table(run.names, run.results) {
			cells = append(cells, []string{r.Engine, fmt.Sprintf("%d/%d", r.Solved, r.Positions), percent(r.Solved, r.Positions),
				orDash(solvedOnly(r.Solved, fmtSeconds(r.MeanSolveTime))), orDash(solvedOnly(r.Solved, fmt.Sprintf("%.1f", r.MeanSolveDepth)))})
		}
	} else {
		for i, name := range EngineNames(d.GetSpec()) {
			searched, solved := engineCounts(d, i)
			cells = append(cells, []string{name, fmt.Sprintf("%d/%d", solved, searched), percent(int(solved), int(searched)), "-", "-"})
		}
	}
	lines = append(lines, alignColumns(cells)...)
	return append(lines, "Time, Depth: mean time and depth to solve over the solved positions")
}

func percent(solved, searched int) string {
	if searched == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*float64(solved)/float64(searched))
}

// solvedOnly is s when some position was solved, "" when none was (a
// mean over nothing is not 0).
func solvedOnly(solved int, s string) string {
	if solved == 0 {
		return ""
	}
	return s
}

// alignColumns joins cells with " | ", each column padded to its widest
// cell: the first left-aligned (names), the others right-aligned
// (figures). Widths count bytes: names are printed as given.
func alignColumns(cells [][]string) []string {
	var width []int
	for _, row := range cells {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	lines := make([]string, len(cells))
	for r, row := range cells {
		parts := make([]string, len(row))
		for i, c := range row {
			if i == 0 {
				parts[i] = fmt.Sprintf("%-*s", width[i], c)
			} else {
				parts[i] = fmt.Sprintf("%*s", width[i], c)
			}
		}
		lines[r] = strings.TrimRight(strings.Join(parts, " | "), " ")
	}
	return lines
}
