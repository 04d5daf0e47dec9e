package gamepair

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Judging workers by their results, the way Fishtest does (its
// get_chi2/get_bad_workers): each worker's game pairs are counted as
// won, drawn or lost pairs (pentanomial WW+WD, DD, LD+LL: the full
// pentanomial's outer cells are too rare for a chi-squared test), a
// contingency table of workers × {won, drawn, lost} is tested for
// homogeneity, and each worker's row gets an "adjusted" chi-squared: the
// statistic of the 2×3 table of that worker against all the others
// together. Under the hypothesis that every worker plays the same match,
// it follows a chi-squared distribution with 2 degrees of freedom, whose
// upper tail is exp(-x/2); the residual is that tail probability turned
// into a standard normal deviate (0 when it would be negative). Workers
// whose expected count in any cell is 5 or less are left out, as the
// chi-squared approximation needs (Fishtest does the same).
//
// The adjusted statistic is exactly the chi-squared of the 2×k table of
// the worker against the pooled rest (TestResidualIsWorkerAgainstRest):
// the rest's row contributes the worker's chi-squared times n/(N-n).
//
// Nobody is excluded while fewer than minResidualWorkers workers (not
// excluded, with pairs in the test) contribute: with two, the table is
// symmetric, each is "far" from the other by the same residual, and the
// check cannot tell the liar from the honest one (issue 41: the honest
// worker of two was the one excluded). Two workers are the cross-check's
// to judge (crosscheck.go), not the residual's.
//
// A worker whose residual passes ResidualLimit, with at least
// ResidualMinPairs pairs, is excluded from the test: an engine that plays
// differently on one machine (a broken build, a throttled or overloaded
// host, a tampered worker) lies far from the rest. The false-positive rate
// under honest workers: one look at one worker exceeds z with probability
// Q(z) (the normal upper tail), 1.3e-12 at the default limit of 7; a test
// looks once per counted batch at each of its workers, so over L looks at
// W workers the chance of excluding an honest one is at most L·W·Q(z)
// (union bound; the looks are strongly correlated, so the real rate is
// far lower): 1.3e-7 for 10,000 batches and 10 workers (docs/sprt-cluster.md).

// Residual defaults (Settings).
const (
	DefaultResidualLimit    = 7.0
	DefaultResidualMinPairs = 20
	// residualMinExpected is the smallest expected cell count a worker's
	// row may have to be tested (Fishtest: more than 5).
	residualMinExpected = 5.0
	// minResidualWorkers is the number of contributing workers below
	// which nobody is excluded for a residual.
	minResidualWorkers = 3
)

// ResidualSettings say when a worker's residual excludes it; a zero Limit
// judges no worker (SPSA tunes: their engines change every batch).
type ResidualSettings struct {
	Limit    float64
	MinPairs int64
}

// pairCounts is a worker's pairs won, drawn and lost (from the first
// engine's side).
type pairCounts [3]float64

func pairsOf(p [5]int64) pairCounts {
	return pairCounts{float64(p[4] + p[3]), float64(p[2]), float64(p[1] + p[0])}
}

// Residuals computes each tested worker's residual from the workers'
// pentanomial counts (by id); workers left out (too few games) are absent.
// A column no worker has any pairs in (no won pairs at all, say, when the
// engines are equal and deterministic) is left out, with one degree of
// freedom less; with fewer than two columns or rows nothing is tested.
func Residuals(penta map[string][5]int64) map[string]float64 {
	rows := map[string]pairCounts{}
	for id, p := range penta {
		if c := pairsOf(p); c[0]+c[1]+c[2] > 0 {
			rows[id] = c
		}
	}
	for {
		if len(rows) < 2 {
			return nil
		}
		var col pairCounts
		for _, r := range rows {
			for k := range col {
				col[k] += r[k]
			}
		}
		var cols []int // the columns with pairs
		for k := range col {
			if col[k] > 0 {
				cols = append(cols, k)
			}
		}
		if len(cols) < 2 {
			return nil
		}
		total := col[0] + col[1] + col[2]
		dropped := false
		for id, r := range rows {
			n := r[0] + r[1] + r[2]
			for _, k := range cols {
				if n*col[k]/total <= residualMinExpected {
					delete(rows, id)
					dropped = true
					break
				}
			}
		}
		if dropped {
			continue
		}
		out := make(map[string]float64, len(rows))
		for id, r := range rows {
			n := r[0] + r[1] + r[2]
			chi := 0.0
			for _, k := range cols {
				e := n * col[k] / total
				chi += (r[k] - e) * (r[k] - e) / e
			}
			// The row's chi-squared over (1 - its share): the 2×columns
			// table of this worker against all the others.
			adj := chi / (1 - n/total)
			out[id] = chi2Z(adj, len(cols)-1)
		}
		return out
	}
}

// chi2Z is the standard normal deviate with the same upper tail as x under
// a chi-squared distribution with df (1 or 2) degrees of freedom: tails
// 2·Q(√x) and exp(-x/2). It is 0 for a tail of a half or more.
func chi2Z(x float64, df int) float64 {
	var logP float64
	switch {
	case !(x > 0):
		return 0
	case df == 1:
		logP = math.Ln2 + logUpperTail(math.Sqrt(x))
	default:
		logP = -x / 2
	}
	if logP >= -math.Ln2 {
		return 0 // a tail of a half or more: no deviation worth showing
	}
	return normalUpperQuantile(logP)
}

// chi2Df2Z is chi2Z with 2 degrees of freedom.
func chi2Df2Z(x float64) float64 { return chi2Z(x, 2) }

// logUpperTail is log Q(z), Q the standard normal upper tail, from
// math.Erfc while it does not underflow and from the asymptotic series
// φ(z)/z·(1 - 1/z² + 3/z⁴ - 15/z⁶) beyond (z ≥ 37, where the series is
// exact to far below the precision shown).
func logUpperTail(z float64) float64 {
	if z < 37 {
		return math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	}
	z2 := z * z
	return logPhi(z) - math.Log(z) + math.Log(1-1/z2+3/(z2*z2)-15/(z2*z2*z2))
}

func logPhi(z float64) float64 { return -z*z/2 - 0.5*math.Log(2*math.Pi) }

// normalUpperQuantile is z with log Q(z) = logP, for tails too small for
// float64 as well (a worker far off has chi-squared values in the
// thousands): Newton's method on log Q.
func normalUpperQuantile(logP float64) float64 {
	z := 0.0
	if logP < -2 {
		z = math.Sqrt(-2*logP - math.Log(-2*logP) - math.Log(2*math.Pi))
	}
	for range 100 {
		// d/dz log Q(z) = -φ(z)/Q(z).
		lq := logUpperTail(z)
		step := (lq - logP) / math.Exp(logPhi(z)-lq)
		z += step
		if math.Abs(step) < 1e-12*max(1, math.Abs(z)) {
			break
		}
	}
	return z
}

// SetResidualJudge makes the record judge workers by their residuals.
func (ws *Workers) SetResidualJudge(s ResidualSettings) { ws.residual = s }

// AddPenta counts a batch's pentanomial for worker id.
func (ws *Workers) AddPenta(id string, p [5]int64) {
	w := ws.get(id)
	for k := range p {
		w.penta[k] += p[k]
	}
}

// residualInput is the pentanomial counts of the workers still in the job,
// with extra added to worker id (a batch about to be counted). An
// excluded worker stays out even when the batch is its own (a lease from
// before its exclusion): back in the pooled rest, it would push the
// honest workers' residuals up, and one of them out.
func (ws *Workers) residualInput(id string, extra [5]int64) map[string][5]int64 {
	in := make(map[string][5]int64, len(ws.byID))
	for wid, w := range ws.byID {
		if w.excluded {
			continue
		}
		p := w.penta
		if wid == id {
			for k := range p {
				p[k] += extra[k]
			}
		}
		in[wid] = p
	}
	return in
}

// JudgeResiduals returns the worker to exclude for its residual, with the
// reason, were a batch of worker id with pentanomial p counted now ("" if
// none): the worker with the largest residual, if it passes the limit and
// has played enough pairs. Nothing changes (the workload stores the
// decision with the batch, then calls Exclude).
func (ws *Workers) JudgeResiduals(id string, p [5]int64) (worker, reason string) {
	if ws.residual.Limit <= 0 {
		return "", ""
	}
	in := ws.residualInput(id, p)
	contributors := 0
	for _, q := range in {
		if c := pairsOf(q); c[0]+c[1]+c[2] > 0 {
			contributors++
		}
	}
	if contributors < minResidualWorkers {
		return "", ""
	}
	res := Residuals(in)
	ids := make([]string, 0, len(res))
	for wid := range res {
		ids = append(ids, wid)
	}
	sort.Strings(ids) // ties go to the first id, the same on every run
	// The worst of all decides, those with few pairs included: a skewed
	// worker pulls the pooled rest of every other worker its way, so an
	// honest worker with enough pairs can pass the limit before the skewed
	// one has enough pairs to be judged. Then nobody is excluded yet.
	best, bestZ := "", 0.0
	for _, wid := range ids {
		if w := ws.byID[wid]; w != nil && w.excluded {
			continue
		}
		if z := res[wid]; z > bestZ {
			best, bestZ = wid, z
		}
	}
	if best == "" || bestZ <= ws.residual.Limit {
		return "", ""
	}
	if pc := pairsOf(in[best]); int64(pc[0]+pc[1]+pc[2]) < ws.residual.MinPairs {
		return "", ""
	}
	pc := pairsOf(in[best])
	return best, fmt.Sprintf(ResidualReason+" (residual %.1f > %.1f; pairs won/drawn/lost %.0f/%.0f/%.0f)",
		bestZ, ws.residual.Limit, pc[0], pc[1], pc[2])
}

// ResidualReason starts the reason of an exclusion for a worker's results.
const ResidualReason = "its results lie far from the other workers'"

// FarOff lists the workers excluded for their results.
func (ws *Workers) FarOff() []string {
	var out []string
	for id, w := range ws.byID {
		if w.excluded && strings.HasPrefix(w.reason, ResidualReason) {
			out = append(out, id)
		}
	}
	return out
}

// ResidualOf returns each worker's residual now, for pages (absent: not
// tested yet).
func (ws *Workers) ResidualOf() map[string]float64 {
	return Residuals(ws.residualInput("", [5]int64{}))
}
