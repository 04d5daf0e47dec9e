// Package resultblock writes the result block of a job: the
// text engine authors paste into a pull request or a commit message, in
// OpenBench's layout or Fishtest's; a kind of job in kinds/ registers its
// own (Register). It stands alone (jobreport, the web
// pages and the webhooks all print it) so that the coordinator's packages
// can use it without importing the client's.
package resultblock

import (
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/base/registry"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Style is the layout of a result block: the text engine authors
// paste into a pull request or a commit message.
type Style string

// The two layouts engine repositories are full of.
const (
	// OpenBench's: Elo | ... / SPRT | tc Threads= Hash= / LLR | ... /
	// Games | N: W: L: D: / Penta | [...].
	OpenBench Style = "openbench"
	// Fishtest's: LLR: x (lo,hi) <e0,e1> (or ELO: x +-y (95%) LOS: z%) /
	// Total: N W: L: D: / Ptnml(0-2): a, b, c, d, e.
	Fishtest Style = "fishtest"
)

// ParseStyle accepts a style name; "" is OpenBench's.
func ParseStyle(s string) (Style, error) {
	switch Style(strings.ToLower(strings.TrimSpace(s))) {
	case "", OpenBench:
		return OpenBench, nil
	case Fishtest:
		return Fishtest, nil
	}
	return "", fmt.Errorf("style %q: want openbench or fishtest", s)
}

// Block is a kind's result block in style (a kind may have one layout
// for both): its lines, without the link, never none.
type Block func(j *arbiterv1.Job, style Style) []string

var blocks = registry.New[Block]("result block of family")

// Register sets the result block of the jobs of family f, from the
// package of the kind (kinds/...); a second block of one family panics.
// (The test kind's is kinds/test's, the tune's kinds/spsa's.)
func Register(f jobkind.Family, b Block) { blocks.Add(string(f), b) }

// Of is the result block of a job of a registered kind in style, ending with link when link is not
// empty (the job page's address). A job of another family has a block
// that says so: it is never empty, so that a webhook's payload always
// carries one.
func Of(j *arbiterv1.Job, style Style, link string) string {
	var lines []string
	if block, ok := blocks.Get(string(jobkind.Of(j).Family)); ok {
		lines = block(j, style)
	} else {
		lines = []string{fmt.Sprintf("%s %s: %s", jobkind.Of(j).Noun, j.GetJobId(), stateName(j.GetState()))}
	}
	if link != "" {
		lines = append(lines, link)
	}
	return strings.Join(lines, "\n") + "\n"
}

// ThreadsHash is "Threads=N Hash=NMB" from the engine's options; an engine
// given no Threads runs one thread, and an engine given no Hash keeps its
// own default, which the block does not guess.
func ThreadsHash(e *arbiterv1.EngineSpec) string {
	threads, hash := "1", ""
	for k, v := range e.GetOptions() {
		switch strings.ToLower(k) {
		case "threads":
			threads = v
		case "hash":
			hash = v
		}
	}
	s := "Threads=" + threads
	if hash != "" {
		s += " Hash=" + hash + "MB"
	}
	return s
}

// TimeControl is a time control as OpenBench writes it in a block: a
// clock with an "s" (10+0.1s), any other limit as key=value.
func TimeControl(tc *arbiterv1.TimeControl) string {
	lim, err := matchspec.LimitsFromProto(tc, 1)
	if err != nil {
		return "?"
	}
	if lim.HasClock() && lim.Nodes == 0 && lim.Depth == 0 && lim.MoveTime == 0 {
		return lim.PGNTimeControl() + "s"
	}
	return lim.String()
}

// stateName is a job state's lower-case name ("running", "done", ...).
func stateName(st arbiterv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "JOB_STATE_"))
}
