// Package resultblock writes the result block of a test or a tune: the
// text engine authors paste into a pull request or a commit message, in
// OpenBench's layout or Fishtest's; a kind of job in kinds/ registers its
// own (Register). It stands alone (jobreport, the web
// pages and the webhooks all print it) so that the coordinator's packages
// can use it without importing the client's.
package resultblock

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/registry"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
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
// Tests and tunes have theirs here until their kinds move into kinds/.
func Register(f jobkind.Family, b Block) { blocks.Add(string(f), b) }

// Of is the result block of a test, a tune or a registered kind in
// style, ending with link when link is not empty (the job page's address). A job of another
// family, or a test without games, has a block that says so: it is never
// empty, so that a webhook's payload always carries one.
func Of(j *arbiterv1.Job, style Style, link string) string {
	var lines []string
	switch jobkind.Of(j).Family {
	case jobkind.FamilyTest:
		lines = testBlock(j, style)
	case jobkind.FamilyTune:
		lines = tuneBlock(j, style)
	default:
		if block, ok := blocks.Get(string(jobkind.Of(j).Family)); ok {
			lines = block(j, style)
		} else {
			lines = []string{fmt.Sprintf("%s %s: %s", jobkind.Of(j).Noun, j.GetJobId(), stateName(j.GetState()))}
		}
	}
	if link != "" {
		lines = append(lines, link)
	}
	return strings.Join(lines, "\n") + "\n"
}

func testBlock(j *arbiterv1.Job, style Style) []string {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	isSPRT := j.GetKind() == jobkind.SPRT
	p := mp.GetPentanomial()
	penta := [5]uint64{p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw()}
	if style == Fishtest {
		var lines []string
		if mp.GetGames() == 0 {
			return []string{"Pending..."}
		}
		if isSPRT {
			sp := spec.GetSprt()
			lines = append(lines, fmt.Sprintf("LLR: %.2f (%.2f,%.2f) %s", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(),
				fishtestBounds(sp.GetModel(), sp.GetElo0(), sp.GetElo1())))
		} else {
			lines = append(lines, fmt.Sprintf("ELO: %.2f +-%.1f (95%%) LOS: %.1f%%", mp.GetElo(), eloError(mp), 100*mp.GetLos()))
		}
		lines = append(lines, fmt.Sprintf("Total: %d W: %d L: %d D: %d", mp.GetGames(), mp.GetWins(), mp.GetLosses(), mp.GetDraws()))
		if p != nil {
			lines = append(lines, fmt.Sprintf("Ptnml(0-2): %d, %d, %d, %d, %d", penta[0], penta[1], penta[2], penta[3], penta[4]))
		}
		if a := earlyStopInterval(j); a != nil {
			lines = append(lines, fmt.Sprintf("Anytime-valid ELO (%.4g%%): [%.2f, %.2f] (%s)", 100*a.GetLevel(), a.GetEloLow(), a.GetEloHigh(), earlyStopWhy(j)))
		}
		return lines
	}
	kind := "Conf"
	if isSPRT {
		kind = "SPRT"
	}
	lines := []string{
		fmt.Sprintf("Elo   | %.2f +- %.2f (95%%)", mp.GetElo(), eloError(mp)),
		fmt.Sprintf("%-5s | %s %s", kind, blockTC(spec), threadsHash(spec.GetEngineA())),
	}
	if isSPRT {
		sp := spec.GetSprt()
		lines = append(lines, fmt.Sprintf("LLR   | %.2f (%.2f, %.2f) [%.2f, %.2f]", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(), sp.GetElo0(), sp.GetElo1()))
	}
	lines = append(lines, fmt.Sprintf("Games | N: %d W: %d L: %d D: %d", mp.GetGames(), mp.GetWins(), mp.GetLosses(), mp.GetDraws()))
	if p != nil {
		lines = append(lines, fmt.Sprintf("Penta | [%d, %d, %d, %d, %d]", penta[0], penta[1], penta[2], penta[3], penta[4]))
	}
	if a := earlyStopInterval(j); a != nil {
		lines = append(lines, fmt.Sprintf("Any   | [%.2f, %.2f] (%.4g%% anytime-valid; %s)", a.GetEloLow(), a.GetEloHigh(), 100*a.GetLevel(), earlyStopWhy(j)))
	}
	return lines
}

// earlyStopInterval is the anytime-valid interval of a test that ended
// before its design said (stopped by hand, by a precision stop, or an SPRT
// capped without a decision), whose fixed-games interval does not hold;
// nil otherwise, so a block of a test that ran its course keeps the
// layout engine repositories expect.
func earlyStopInterval(j *arbiterv1.Job) *arbiterv1.AnytimeInterval {
	if earlyStopWhy(j) == "" {
		return nil
	}
	return j.GetMatchProgress().GetAnytime()
}

// earlyStopWhy says how a test ended early, "" if it did not.
func earlyStopWhy(j *arbiterv1.Job) string {
	mp := j.GetMatchProgress()
	switch {
	case mp.GetStoppedByHand():
		return "stopped by hand"
	case mp.GetStoppedByPrecision():
		return "precision stop"
	case j.GetKind() == jobkind.SPRT && j.GetState() == arbiterv1.JobState_JOB_STATE_DONE && mp.GetSprtState() == string(sprt.Continue):
		return "game cap reached"
	}
	return ""
}

// eloError is the half width of the 95% interval as OpenBench prints it:
// the larger side (the interval is not symmetric for lopsided results).
func eloError(mp *arbiterv1.MatchProgress) float64 {
	e := max(mp.GetEloCiHigh()-mp.GetElo(), mp.GetElo()-mp.GetEloCiLow())
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return 0
	}
	return e
}

// fishtestBounds writes elo0 and elo1 in Fishtest's brackets, which name
// the model: <> normalized, {} logistic, [] BayesElo.
func fishtestBounds(model string, elo0, elo1 float64) string {
	open, closing := "{", "}"
	if m, err := sprt.ParseModel(model); err == nil {
		switch m {
		case sprt.Normalized:
			open, closing = "<", ">"
		case sprt.BayesElo:
			open, closing = "[", "]"
		}
	}
	return fmt.Sprintf("%s%.2f,%.2f%s", open, elo0, elo1, closing)
}

// blockTC is engine A's limits as OpenBench writes them: a clock with an
// "s" (10+0.1s), any other limit as key=value.
func blockTC(spec *arbiterv1.MatchSpec) string {
	lim, err := matchspec.LimitsFromProto(matchspec.EngineTimeControl(spec.GetTimeControl(), spec.GetEngineA()), 1)
	if err != nil {
		return "?"
	}
	if lim.HasClock() && lim.Nodes == 0 && lim.Depth == 0 && lim.MoveTime == 0 {
		return lim.PGNTimeControl() + "s"
	}
	return lim.String()
}

// threadsHash is "Threads=N Hash=NMB" from the engine's options; an engine
// given no Threads runs one thread, and an engine given no Hash keeps its
// own default, which the block does not guess.
func threadsHash(e *arbiterv1.EngineSpec) string {
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

// tuneBlock is a tune's block: Fishtest's two SPSA lines, and the values
// reached (OpenBench has no block for tunes; its users paste the values).
func tuneBlock(j *arbiterv1.Job, style Style) []string {
	spec, sp := j.GetSpsa(), j.GetSpsaProgress()
	lines := []string{
		fmt.Sprintf("%d/%d iterations", sp.GetUpdates(), sp.GetBatchesTotal()),
		fmt.Sprintf("%d/%d games played", sp.GetGames(), 2*spec.GetPairs()),
	}
	if style == Fishtest {
		return lines
	}
	lines = []string{
		fmt.Sprintf("SPSA  | %s %s", tuneTC(spec), threadsHash(spec.GetEngine())),
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

func tuneTC(spec *arbiterv1.SpsaSpec) string {
	lim, err := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
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
