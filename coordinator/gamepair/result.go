package gamepair

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/gamelabel"
)

// Limits on one batch result.
const (
	// MaxPGNBytes bounds one game's PGN.
	MaxPGNBytes = 1 << 20
	// MaxResultPGNBytes bounds the PGNs of one batch result together; the
	// API layer's message limit must leave room for it.
	MaxResultPGNBytes = 12 << 20
	// maxIncidentsPerGame bounds a result's incidents (2 × pairs × this).
	maxIncidentsPerGame = 64
	// maxCount bounds any count a worker reports (far above any batch).
	maxCount = 1 << 40
)

// Incident classes counted per worker (stored with each batch).
const (
	IncTimeLoss   = "time_loss"
	IncCrash      = "crash"
	IncIllegal    = "illegal"
	IncHang       = "hang"
	IncDisconnect = "disconnect"
	IncOther      = "other"
	IncOverrun    = "overrun"
	// IncLimit: the worker's sandbox killed an uploaded engine (memory,
	// CPU time, a child process): the engine's fault, like a crash.
	IncLimit = "limit"
)

// Malformed is the error of a result that does not fit its batch.
func Malformed(format string, args ...any) error {
	return apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, format, args...)
}

// Result is a checked batch result: engine A's counts, the games and the
// incidents.
type Result struct {
	Counts    sprt.Results // with its pentanomial
	PGNs      []string
	Games     []GameLabel // by game index
	Incidents map[string]int64
}

// CheckResult refuses a result that does not fit its batch of pairs game
// pairs: a pentanomial that does not count the pairs, W/D/L that cannot
// come from it, a PGN count that differs from the games, a PGN over its
// limit, an incident naming a game outside the batch, game outcomes that
// are missing, repeated, or disagree with the W/D/L and pentanomial (game
// 2k has engine A as White, game 2k+1 engine B).
func CheckResult(unit string, pairs int, r *arbiterv1.GamePairBatchResult) (*Result, error) {
	u := apierr.Q(unit)
	games := 2 * pairs
	p := r.GetPentanomial()
	if p == nil {
		return nil, Malformed("unit %s: pentanomial missing", u)
	}
	penta := sprt.Pentanomial{int64(min(p.GetLl(), maxCount+1)), int64(min(p.GetLd(), maxCount+1)), int64(min(p.GetDd(), maxCount+1)),
		int64(min(p.GetWd(), maxCount+1)), int64(min(p.GetWw(), maxCount+1))}
	for _, v := range penta {
		if v > maxCount {
			return nil, Malformed("unit %s: pentanomial count out of range", u)
		}
	}
	if got := penta.Pairs(); got != int64(pairs) {
		return nil, Malformed("unit %s has %d pairs; the pentanomial counts %d", u, pairs, got)
	}
	if r.GetWins() > maxCount || r.GetDraws() > maxCount || r.GetLosses() > maxCount {
		return nil, Malformed("unit %s: W/D/L out of range", u)
	}
	res := sprt.Results{Wins: int64(r.GetWins()), Draws: int64(r.GetDraws()), Losses: int64(r.GetLosses()), Pentanomial: &penta}
	if res.Wins+res.Draws+res.Losses != int64(games) {
		return nil, Malformed("unit %s has %d games; W/D/L count %d", u, games, res.Wins+res.Draws+res.Losses)
	}
	if err := res.Validate(); err != nil {
		return nil, Malformed("unit %s: %v", u, err)
	}
	if len(r.GetPgns()) != games {
		return nil, Malformed("unit %s has %d games; the result has %d PGNs", u, games, len(r.GetPgns()))
	}
	total := 0
	for i, g := range r.GetPgns() {
		if len(g) > MaxPGNBytes {
			return nil, Malformed("unit %s: PGN %d is %d bytes, over the %d-byte limit", u, i, len(g), MaxPGNBytes)
		}
		if !strings.HasPrefix(strings.TrimSpace(g), "[") {
			return nil, Malformed("unit %s: PGN %d is not a PGN game", u, i)
		}
		if total += len(g); total > MaxResultPGNBytes {
			return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge,
				"unit %s: the PGNs pass %d bytes; a batch result may carry at most that", u, MaxResultPGNBytes)
		}
	}
	if len(r.GetIncidents()) > maxIncidentsPerGame*games {
		return nil, Malformed("unit %s: %d incidents for %d games", u, len(r.GetIncidents()), games)
	}
	incidents := map[string]int64{}
	for i, inc := range r.GetIncidents() {
		if inc.GetGameIndex() >= uint32(games) {
			return nil, Malformed("unit %s: incident %d names game %d of %d", u, i, inc.GetGameIndex(), games)
		}
		incidents[incidentClass(inc.GetKind())]++
	}
	if n := r.GetOverruns(); n > 0 {
		if n > maxCount {
			return nil, Malformed("unit %s: overruns out of range", u)
		}
		incidents[IncOverrun] += int64(n)
	}
	labels, err := checkGames(u, pairs, r.GetGames(), res)
	if err != nil {
		return nil, err
	}
	return &Result{Counts: res, PGNs: r.GetPgns(), Games: labels, Incidents: incidents}, nil
}

// checkGames checks the per-game outcomes against the batch's counts and
// returns their metric labels in game order.
func checkGames(u string, pairs int, games []*arbiterv1.GameOutcome, res sprt.Results) ([]GameLabel, error) {
	n := 2 * pairs
	if len(games) != n {
		return nil, Malformed("unit %s has %d games; the result has %d game outcomes", u, n, len(games))
	}
	labels := make([]GameLabel, n)
	seen := make([]bool, n)
	for i, g := range games {
		k := g.GetGameIndex()
		if k >= uint32(n) || seen[k] {
			return nil, Malformed("unit %s: game outcome %d names game %d (each of 0..%d once)", u, i, k, n-1)
		}
		seen[k] = true
		l, err := labelOf(g.GetResult(), g.GetTermination())
		if err != nil {
			return nil, Malformed("unit %s: game %d: %v", u, k, err)
		}
		labels[k] = l
	}
	// Engine A's outcome in each game, and its pair scores.
	var wdl sprt.Results
	var penta sprt.Pentanomial
	for k := 0; k < n; k += 2 {
		a, b := outcomeOfA(labels[k].Result, true), outcomeOfA(labels[k+1].Result, false)
		if a < 0 || b < 0 {
			return nil, Malformed("unit %s: pair %d has an unfinished game", u, k/2)
		}
		_ = wdl.AddPair(sprt.Outcome(a), sprt.Outcome(b))
		penta[a+b]++
	}
	if wdl.Wins != res.Wins || wdl.Draws != res.Draws || wdl.Losses != res.Losses {
		return nil, Malformed("unit %s: the game outcomes give W/D/L %d/%d/%d; the result says %d/%d/%d",
			u, wdl.Wins, wdl.Draws, wdl.Losses, res.Wins, res.Draws, res.Losses)
	}
	if penta != *res.Pentanomial {
		return nil, Malformed("unit %s: the game outcomes give pentanomial %v; the result says %v", u, penta, *res.Pentanomial)
	}
	return labels, nil
}

// outcomeOfA is engine A's outcome (sprt.Loss, Draw, Win) in a game whose
// White is A when aWhite; -1 for an unfinished game.
func outcomeOfA(result string, aWhite bool) int {
	switch {
	case result == gamelabel.Draw:
		return int(sprt.Draw)
	case result == gamelabel.White && aWhite, result == gamelabel.Black && !aWhite:
		return int(sprt.Win)
	case result == gamelabel.White, result == gamelabel.Black:
		return int(sprt.Loss)
	}
	return -1
}

func incidentClass(k arbiterv1.IncidentKind) string {
	switch k {
	case arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS:
		return IncTimeLoss
	case arbiterv1.IncidentKind_INCIDENT_KIND_CRASH:
		return IncCrash
	case arbiterv1.IncidentKind_INCIDENT_KIND_ILLEGAL_MOVE:
		return IncIllegal
	case arbiterv1.IncidentKind_INCIDENT_KIND_HANG:
		return IncHang
	case arbiterv1.IncidentKind_INCIDENT_KIND_DISCONNECT:
		return IncDisconnect
	case arbiterv1.IncidentKind_INCIDENT_KIND_LIMIT:
		return IncLimit
	}
	return IncOther
}

// BadGames is the number of worker-caused incidents of a batch: time
// losses and hangs. Crashes and illegal moves are the engine's fault.
func BadGames(inc map[string]int64) int {
	return int(inc[IncTimeLoss] + inc[IncHang])
}

// EncodeIncidents renders incident counts as stored: "kind:n;kind:n",
// sorted, zeros left out.
func EncodeIncidents(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if m[k] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

// DecodeIncidents reads EncodeIncidents' output; parts that do not parse
// (or are negative) are skipped.
func DecodeIncidents(s string) map[string]int64 {
	m := map[string]int64{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			m[k] += n
		}
	}
	return m
}
