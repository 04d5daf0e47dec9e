package epd

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// EngineRow is one engine's line of the table.
type EngineRow struct {
	Engine    string
	Positions int // positions searched
	Solved    int
	Errors    int // searches that gave no move (crash, hang)
	// Over the solved positions: the mean time and depth to solve.
	MeanSolveTime  time.Duration
	MeanSolveDepth float64
	Nodes          int64 // over every search
	// OnlySolver counts positions this engine solved and no other did
	// (0 with one engine).
	OnlySolver int
}

// Table sums results per engine (names by engine index). Results of
// engines or positions out of range are a programming error upstream and
// are skipped here.
func Table(names []string, results []Result) []EngineRow {
	rows := make([]EngineRow, len(names))
	solveTime := make([]time.Duration, len(names))
	solveDepth := make([]int64, len(names))
	solvers := map[int][]int{} // position -> engines that solved it
	for i := range rows {
		rows[i].Engine = names[i]
	}
	for _, r := range results {
		if r.Engine < 0 || r.Engine >= len(rows) {
			continue
		}
		row := &rows[r.Engine]
		row.Positions++
		row.Nodes += r.Nodes
		if r.Error != "" {
			row.Errors++
		}
		if r.Solved {
			row.Solved++
			solveTime[r.Engine] += r.SolveTime
			solveDepth[r.Engine] += int64(r.SolveDepth)
			solvers[r.Position] = append(solvers[r.Position], r.Engine)
		}
	}
	for i := range rows {
		if n := rows[i].Solved; n > 0 {
			rows[i].MeanSolveTime = solveTime[i] / time.Duration(n)
			rows[i].MeanSolveDepth = float64(solveDepth[i]) / float64(n)
		}
	}
	if len(names) > 1 {
		for _, engines := range solvers {
			if len(engines) == 1 {
				rows[engines[0]].OnlySolver++
			}
		}
	}
	return rows
}

// WriteTable prints the table for people.
func WriteTable(w io.Writer, rows []EngineRow) {
	width := len("engine")
	for _, r := range rows {
		width = max(width, len(r.Engine))
	}
	fmt.Fprintf(w, "%-*s  %9s  %6s  %8s  %6s  %12s  %6s  %6s\n", width, "engine", "solved", "%", "time", "depth", "nodes", "only", "errors")
	for _, r := range rows {
		pct := 0.0
		if r.Positions > 0 {
			pct = 100 * float64(r.Solved) / float64(r.Positions)
		}
		fmt.Fprintf(w, "%-*s  %9s  %6.1f  %8s  %6.1f  %12d  %6d  %6d\n", width, r.Engine,
			fmt.Sprintf("%d/%d", r.Solved, r.Positions), pct, fmtSeconds(r.MeanSolveTime), r.MeanSolveDepth, r.Nodes, r.OnlySolver, r.Errors)
	}
	fmt.Fprintf(w, "%s\ntime, depth: mean time and depth to solve over the solved positions; only: solved by no other engine\n", strings.Repeat("-", width+73))
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// Line is one result as `arbiter epd` prints it while the run goes on.
func Line(s *Suite, names []string, r Result) string {
	p := &s.Positions[r.Position]
	verdict := "no "
	if r.Solved {
		verdict = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-16s %s move %-6s", p.ID, names[r.Engine], verdict, orDash(r.Move))
	if r.Solved {
		fmt.Fprintf(&b, " solved at %s depth %d", fmtSeconds(r.SolveTime), r.SolveDepth)
	}
	fmt.Fprintf(&b, " (depth %d, %d nodes", r.Depth, r.Nodes)
	if r.HasScore {
		fmt.Fprintf(&b, ", %s", r.Score)
	}
	b.WriteString(")")
	if r.Error != "" {
		fmt.Fprintf(&b, " error: %s", r.Error)
	}
	if !r.Solved {
		want := strings.Join(p.Best, " ")
		if len(p.Avoid) > 0 {
			want = strings.TrimSpace(want + " not " + strings.Join(p.Avoid, " "))
		}
		fmt.Fprintf(&b, " want %s", want)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
