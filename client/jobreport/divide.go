package jobreport

import (
	"sort"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// SortedDivide is a job's divide in the order `arbiter perft --divide`
// prints it (by UCI move), whatever order the coordinator sent it in.
func SortedDivide(j *arbiterv1.Job) []*arbiterv1.DivideEntry {
	d := append([]*arbiterv1.DivideEntry(nil), j.GetDivide()...)
	sort.Slice(d, func(a, b int) bool { return d[a].GetMove() < d[b].GetMove() })
	return d
}
