package jobreport

import (
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

// BlockStyle is the layout of a result block (package resultblock).
type BlockStyle = resultblock.Style

// The two layouts engine repositories are full of.
const (
	BlockOpenBench = resultblock.OpenBench
	BlockFishtest  = resultblock.Fishtest
)

// ParseBlockStyle accepts a style name; "" is OpenBench's.
func ParseBlockStyle(s string) (BlockStyle, error) { return resultblock.ParseStyle(s) }

// Block is the result block of a test or a tune (resultblock.Of).
func Block(j *arbiterv1.Job, style BlockStyle, link string) string {
	return resultblock.Of(j, style, link)
}
