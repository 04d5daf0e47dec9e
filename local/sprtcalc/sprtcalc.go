// Package sprtcalc is `arbiter sprt`, the SPRT calculator on given
// results: it reads counts (ParseCounts), prints an analysis as text or
// one JSON object, and replays a test's cumulative results line by line
// (Replay) as the test would have seen them. Bad input is a cliexit usage
// error whose text starts "sprt: " and names the flag.
package sprtcalc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/sprt"
)

// maxCount bounds every count so that sums stay exact in float64 (2^53) and
// far from int64 overflow; no real test comes near it.
const maxCount = int64(1) << 50

// maxSequenceLine is the longest line accepted in a replayed file.
const maxSequenceLine = 1 << 20

// ParseCounts reads comma-separated non-negative integer counts, one per
// name.
func ParseCounts(flag, value string, names []string) ([]int64, error) {
	fields := strings.Split(value, ",")
	if len(fields) != len(names) {
		return nil, cliexit.Usage("sprt: %s %q: want %d comma-separated counts %s, got %d",
			flag, value, len(names), strings.Join(names, ","), len(fields))
	}
	counts := make([]int64, len(fields))
	for i, field := range fields {
		field = strings.TrimSpace(field)
		n, err := strconv.ParseInt(field, 10, 64)
		switch {
		case err != nil:
			return nil, cliexit.Usage("sprt: %s %q: %s = %q is not a whole number", flag, value, names[i], field)
		case n < 0:
			return nil, cliexit.Usage("sprt: %s %q: %s = %d is negative", flag, value, names[i], n)
		case n > maxCount:
			return nil, cliexit.Usage("sprt: %s %q: %s = %d is too large (at most %d)", flag, value, names[i], n, maxCount)
		}
		counts[i] = n
	}
	return counts, nil
}

// analysisJSON is the --json output: the fields a script needs first, flat,
// then the details. Non-finite numbers become null, which JSON can carry.
type analysisJSON struct {
	LLR        float64    `json:"llr"`
	LowerBound float64    `json:"lower_bound"`
	UpperBound float64    `json:"upper_bound"`
	State      sprt.State `json:"state"`
	O0         float64    `json:"o0"`
	O1         float64    `json:"o1"`
	// Elo is Fishtest's sequential estimate (SPRT_elo), logistic Elo.
	Elo             float64           `json:"elo"`
	EloCI95         [2]float64        `json:"elo_ci95"`
	LOS             float64           `json:"los"`
	NElo            float64           `json:"nelo"`
	NEloCI95        [2]float64        `json:"nelo_ci95"`
	NEloHalf95      float64           `json:"nelo_halfwidth95"`
	FixedGames      sprt.FixedElo     `json:"fixed_games_elo"`
	NEloTrinomial   *sprt.NElo        `json:"nelo_trinomial,omitempty"`
	NEloPentanomial *sprt.NElo        `json:"nelo_pentanomial,omitempty"`
	Model           sprt.Model        `json:"elo_model"`
	Elo0            float64           `json:"elo0"`
	Elo1            float64           `json:"elo1"`
	Alpha           float64           `json:"alpha"`
	Beta            float64           `json:"beta"`
	LLRModel        sprt.Model        `json:"llr_model"`
	LLRBounds       [2]float64        `json:"llr_bounds"`
	DrawElo         *float64          `json:"drawelo,omitempty"`
	Games           int64             `json:"games"`
	Pairs           *int64            `json:"pairs,omitempty"`
	Wins            *int64            `json:"wins,omitempty"`
	Draws           *int64            `json:"draws,omitempty"`
	Losses          *int64            `json:"losses,omitempty"`
	Penta           *sprt.Pentanomial `json:"pentanomial,omitempty"`
	PairsRatio      *float64          `json:"pairs_ratio,omitempty"`
}

// WriteJSON writes the analysis as one JSON line: the fields a script
// needs first, flat, then the details.
func WriteJSON(w io.Writer, a sprt.Analysis) error { return writeJSONLine(w, newAnalysisJSON(a)) }

func newAnalysisJSON(a sprt.Analysis) analysisJSON {
	r := a.Results
	n := a.NElo()
	j := analysisJSON{
		LLR: a.Status.LLR, LowerBound: a.Status.LowerBound, UpperBound: a.Status.UpperBound,
		State: a.Status.State, O0: a.Status.O0, O1: a.Status.O1,
		Elo: a.Estimate.Elo, EloCI95: a.Estimate.CI95, LOS: a.Estimate.LOS,
		NElo: n.NElo, NEloCI95: n.CI95, NEloHalf95: n.HalfWidth95,
		FixedGames: a.Fixed, NEloTrinomial: a.NEloTrinomial, NEloPentanomial: a.NEloPentanomial,
		Model: a.Params.Model, Elo0: a.Params.Elo0, Elo1: a.Params.Elo1,
		Alpha: a.Params.Alpha, Beta: a.Params.Beta,
		LLRModel: a.LLRModel, LLRBounds: a.LLRBounds, DrawElo: a.DrawElo,
		Games: r.Games(), Penta: r.Pentanomial,
	}
	if r.HasWDL() {
		j.Wins, j.Draws, j.Losses = &r.Wins, &r.Draws, &r.Losses
	}
	if p := r.Pentanomial; p != nil {
		pairs := p.Pairs()
		j.Pairs = &pairs
		if ratio := sprt.PairsRatio(*p); !math.IsNaN(ratio) && !math.IsInf(ratio, 0) {
			j.PairsRatio = &ratio
		}
	}
	return j
}

// Text is the analysis as a report for people.
func Text(a sprt.Analysis) string {
	var b strings.Builder
	p, r, st := a.Params, a.Results, a.Status
	fmt.Fprintf(&b, "SPRT      %s Elo [%.2f, %.2f], alpha %g, beta %g\n", p.Model, p.Elo0, p.Elo1, p.Alpha, p.Beta)
	if a.DrawElo != nil {
		fmt.Fprintf(&b, "          as logistic Elo [%.4f, %.4f] at drawelo %.2f\n", a.LLRBounds[0]+0, a.LLRBounds[1]+0, *a.DrawElo)
	}
	line := fmt.Sprintf("Results   %d games", r.Games())
	if r.HasWDL() {
		line += fmt.Sprintf(": W %d, D %d, L %d", r.Wins, r.Draws, r.Losses)
	}
	if pt := r.Pentanomial; pt != nil {
		line += fmt.Sprintf("; %d pairs, Ptnml(0-2): [%d, %d, %d, %d, %d]", pt.Pairs(), pt[0], pt[1], pt[2], pt[3], pt[4])
	}
	b.WriteString(line + "\n")
	fmt.Fprintf(&b, "LLR       %.4f  bounds (%.2f, %.2f)  state: %s\n", st.LLR, st.LowerBound, st.UpperBound, st.State)
	fmt.Fprintf(&b, "Elo       %.2f [%.2f, %.2f] (95%%, sequential estimate, logistic), LOS %.2f %%\n",
		a.Estimate.Elo, a.Estimate.CI95[0], a.Estimate.CI95[1], 100*a.Estimate.LOS)
	fmt.Fprintf(&b, "Fixed Elo %.2f +/- %.2f (95%%), LOS %.2f %%\n", a.Fixed.Elo, a.Fixed.HalfWidth95, 100*a.Fixed.LOS)
	n := a.NElo()
	fmt.Fprintf(&b, "nElo      %.2f +/- %.2f (95%%)\n", n.NElo, n.HalfWidth95)
	return b.String()
}

// sequenceLine is one line of a replayed file; pointers tell a missing
// field from a zero.
type sequenceLine struct {
	Pentanomial *[]int64 `json:"pentanomial"`
	Wins        *int64   `json:"wins"`
	Draws       *int64   `json:"draws"`
	Losses      *int64   `json:"losses"`
}

// sequenceStep is one output line of --sequence: the input line it answers,
// the sample count (pairs, or games for W/D/L-only lines) and the test.
type sequenceStep struct {
	Line  int        `json:"line"`
	Pairs *int64     `json:"pairs,omitempty"`
	Games *int64     `json:"games,omitempty"`
	LLR   float64    `json:"llr"`
	O0    float64    `json:"o0"`
	O1    float64    `json:"o1"`
	State sprt.State `json:"state"`
}

// Replay reads cumulative results, one JSON object a line, from in (name
// is the file named in errors) and writes one JSON line per step to out:
// the sample count, llr, o0, o1 and the state, stopping at the first
// decision as the test would (a note on warn says which lines went
// unused).
func Replay(in io.Reader, name string, out, warn io.Writer, params sprt.Params, batchPairs int64) error {
	seq, err := sprt.NewSequential(params, batchPairs)
	if err != nil {
		return cliexit.Usage("sprt: %v", err)
	}
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), maxSequenceLine)
	var prev *sprt.Results
	lineNo, steps := 0, 0
	decided := 0
	for scanner.Scan() {
		lineNo++
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		if decided > 0 {
			fmt.Fprintf(warn, "arbiter sprt: the test stopped at line %d; line %d and later are not used\n", decided, lineNo)
			return nil
		}
		results, err := parseSequenceLine(text, prev)
		if err != nil {
			return cliexit.Usage("sprt: --sequence %s line %d: %v", name, lineNo, err)
		}
		st, err := seq.Update(results)
		if err != nil {
			return cliexit.Usage("sprt: --sequence %s line %d: %v", name, lineNo, err)
		}
		step := sequenceStep{Line: lineNo, LLR: st.LLR, O0: st.O0, O1: st.O1, State: st.State}
		if results.Pentanomial != nil {
			pairs := results.Pentanomial.Pairs()
			step.Pairs = &pairs
		} else {
			games := results.Games()
			step.Games = &games
		}
		if err := writeJSONLine(out, step); err != nil {
			return err
		}
		steps++
		prev = &results
		if st.State != sprt.Continue {
			decided = lineNo
		}
	}
	if err := scanner.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return cliexit.Usage("sprt: --sequence %s line %d: longer than %d bytes", name, lineNo+1, maxSequenceLine)
		}
		return cliexit.Usage("sprt: --sequence %s: %v", name, err)
	}
	if steps == 0 {
		return cliexit.Usage("sprt: --sequence %s: no results lines", name)
	}
	return nil
}

// parseSequenceLine decodes one cumulative results line and checks it
// against the previous one: same shape, no count going down.
func parseSequenceLine(text []byte, prev *sprt.Results) (sprt.Results, error) {
	var line sequenceLine
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&line); err != nil {
		return sprt.Results{}, fmt.Errorf("not a JSON results object: %v", err)
	}
	if dec.More() {
		return sprt.Results{}, errors.New("more than one JSON value on the line")
	}
	var r sprt.Results
	if line.Pentanomial != nil {
		counts := *line.Pentanomial
		if len(counts) != 5 {
			return r, fmt.Errorf("pentanomial has %d counts, want 5 (LL, LD, WLDD, DW, WW)", len(counts))
		}
		var p sprt.Pentanomial
		for i, n := range counts {
			if n < 0 || n > maxCount {
				return r, fmt.Errorf("pentanomial count %d = %d is out of range", i, n)
			}
			p[i] = n
		}
		r.Pentanomial = &p
	}
	wdl := []*int64{line.Wins, line.Draws, line.Losses}
	given := 0
	for _, v := range wdl {
		if v != nil {
			given++
		}
	}
	switch {
	case given == 3:
		r.Wins, r.Draws, r.Losses = *line.Wins, *line.Draws, *line.Losses
		for _, n := range []int64{r.Wins, r.Draws, r.Losses} {
			if n < 0 || n > maxCount {
				return r, fmt.Errorf("game count %d is out of range", n)
			}
		}
	case given != 0:
		return r, errors.New("give all of wins, draws and losses, or none")
	case r.Pentanomial == nil:
		return r, errors.New(`no counts: want "pentanomial" and/or "wins", "draws", "losses"`)
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if prev != nil {
		if (prev.Pentanomial == nil) != (r.Pentanomial == nil) || prev.HasWDL() != r.HasWDL() {
			return r, errors.New("the line carries different fields than the lines before it")
		}
		if r.Wins < prev.Wins || r.Draws < prev.Draws || r.Losses < prev.Losses {
			return r, errors.New("game counts went down; the lines must be cumulative")
		}
		if r.Pentanomial != nil {
			for i := range r.Pentanomial {
				if r.Pentanomial[i] < prev.Pentanomial[i] {
					return r, fmt.Errorf("pentanomial count %d went down from %d to %d; the lines must be cumulative",
						i, prev.Pentanomial[i], r.Pentanomial[i])
				}
			}
		}
	}
	return r, nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
