package web

import (
	"fmt"
	"html/template"
	"math"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// funcs are the templates' helpers: formatting only; pages compute their
// data in Go.
var funcs = template.FuncMap{
	"state":      jobState,
	"vstate":     verificationState,
	"stateClass": stateClass,
	"ago":        ago,
	"when":       when,
	"secs":       secs,
	"f1":         func(x float64) string { return fixed(x, 1) },
	"f2":         func(x float64) string { return fixed(x, 2) },
	"signed2":    func(x float64) string { return fmt.Sprintf("%+.2f", x) },
	"pct":        func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" },
	"group":      group,
	"ugroup":     func(n uint64) string { return group(strconv.FormatUint(n, 10)) },
	"igroup":     func(n int64) string { return group(strconv.FormatInt(n, 10)) },
	"tc":         timeControl,
	"testtc":     testTimeControl,
	"engine":     engineDesc,
	"artifact":   matchspec.ArtifactDesc,
	"net":        matchspec.NetDesc,
	"checkState": matchspec.ArtifactCheckState,
	"penta":      pentaString,
	"llrBar":     llrBar,
	"progress":   progressBar,
	"board":      func(fen string) template.HTML { return boardSVG(fen, "", 36) },
	"testURL":    func(id string) string { return "/tests/" + url.PathEscape(id) },
	"userURL":    func(name string) string { return "/users/" + url.PathEscape(name) },
	"dateOnly":   dateOnly,
	"tuneURL":    func(id string) string { return "/tunes/" + url.PathEscape(id) },
	"paramValue": ParamValue,
	"sig":        sig,
	"jobURL":     jobURL,
	"verifyURL":  func(id string) string { return "/verify/" + url.PathEscape(id) },
	"add":        func(a, b int) int { return a + b },
	"query":      query,
	"sortedKeys": sortedKeys,
	"join":       strings.Join,
	"ts":         func(t *timestamppb.Timestamp) time.Time { return tsTime(t) },
	"mnps":       mnps,
	"unverified": perftUnverified,
	"half":       func(lo, hi float64) float64 { return (hi - lo) / 2 },
	"elapsed":    elapsed,
	"spsaParams": spsaParams,
	// plyArgs passes a ply of a game's moves (the test kind's game
	// page) and the ply shown to the "ply" template.
	"plyArgs": func(p any, current int) struct {
		P       any
		Current int
	} {
		return struct {
			P       any
			Current int
		}{p, current}
	},
}

// elapsed is a job's run time: to its end, or to now while it runs.
func elapsed(j *arbiterv1.Job, now time.Time) time.Duration {
	end := tsTime(j.GetFinishedAt())
	if end.IsZero() {
		end = now
	}
	return end.Sub(tsTime(j.GetCreatedAt()))
}

// fixed formats x with prec decimals, without a sign on zero ("-0.00"
// reads as a negative LLR).
func fixed(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

func tsTime(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

// jobState names a job's state as pages show it: "pending" for a running
// job that has neither counted nor leased anything yet.
func jobState(j *arbiterv1.Job) string {
	p, mp, sp := j.GetProgress(), j.GetMatchProgress(), j.GetSpsaProgress()
	started := p.GetUnitsDone() != 0 || p.GetActiveWorkers() != 0 || mp.GetGames() != 0 || mp.GetBatchesLeased() != 0 ||
		sp.GetUpdates() != 0 || sp.GetBatchesLeased() != 0
	return stateName(j.GetState(), started)
}

// verificationState is jobState for a tune's verification test, from what
// the tune's snapshot holds of it.
func verificationState(v *arbiterv1.SpsaVerification) string {
	p := v.GetProgress()
	return stateName(v.GetState(), p.GetGames() != 0 || p.GetBatchesLeased() != 0)
}

func stateName(s arbiterv1.JobState, started bool) string {
	switch s {
	case arbiterv1.JobState_JOB_STATE_RUNNING:
		if !started {
			return "pending"
		}
		return "running"
	case arbiterv1.JobState_JOB_STATE_PENDING:
		return "approval" // waits for an approver
	case arbiterv1.JobState_JOB_STATE_DONE:
		return "done"
	case arbiterv1.JobState_JOB_STATE_FAILED:
		return "failed"
	case arbiterv1.JobState_JOB_STATE_CANCELLED:
		return "cancelled"
	}
	return "unknown"
}

func stateClass(state string) string { return "st-" + state }

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + " days ago"
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func secs(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d < 2*time.Hour:
		return strconv.FormatFloat(d.Seconds(), 'f', 0, 64) + " s"
	}
	return strconv.FormatFloat(d.Hours(), 'f', 1, 64) + " h"
}

// group separates the thousands of a decimal integer with thin spaces.
func group(s string) string {
	if len(s) <= 4 || strings.ContainsAny(s, ".e") {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	return b.String()
}

func timeControl(tc *arbiterv1.TimeControl) string {
	lim, err := matchspec.LimitsFromProto(tc, 1)
	if err != nil {
		return "?"
	}
	return lim.String()
}

// testTimeControl is a test's time control, or each engine's when they
// differ (time odds).
func testTimeControl(s *arbiterv1.MatchSpec) string {
	return matchspec.DescribeLimits(s.GetTimeControl(), s.GetEngineA(), s.GetEngineB())
}

func engineDesc(e *arbiterv1.EngineSpec) string {
	if e == nil {
		return "-"
	}
	var parts []string
	if matchspec.IsBuiltin(e) {
		parts = append(parts, "builtin")
	} else {
		parts = append(parts, e.GetCommand())
		parts = append(parts, e.GetArgs()...)
		if p := e.GetProtocol(); p != "" && p != "uci" {
			parts = append(parts, "("+p+")")
		}
	}
	for _, k := range sortedKeys(e.GetOptions()) {
		parts = append(parts, k+"="+e.GetOptions()[k])
	}
	return strings.Join(parts, " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pentaString(p *arbiterv1.Pentanomial) string {
	return fmt.Sprintf("%d, %d, %d, %d, %d", p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw())
}

func jobURL(j *arbiterv1.Job) string { return jobkind.URL(j) }

// query is the current query with one key set (a "" value drops it).
func query(q url.Values, key, value string) string {
	c := url.Values{}
	for k, v := range q {
		if k != "live" {
			c[k] = v
		}
	}
	if value == "" {
		c.Del(key)
	} else {
		c.Set(key, value)
	}
	if len(c) == 0 {
		return "?"
	}
	return "?" + c.Encode()
}

// mnps is a node count over a time in millions of nodes per second.
func mnps(nodes string, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	n, ok := new(big.Float).SetString(nodes)
	if !ok {
		return "-"
	}
	f, _ := n.Float64()
	r := f / d.Seconds() / 1e6
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return "-"
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// maxListedParams is the parameters of a tune the list names; the rest are
// counted.
const maxListedParams = 4

// spsaParams names a tune's parameters with their value now and at the
// start ("Name 12 (from 10)"), the first few of them.
func spsaParams(sp *arbiterv1.SpsaProgress) string {
	ps := sp.GetParams()
	val := func(p *arbiterv1.SpsaParamState, x float64) string {
		if p.GetIsFloat() {
			return fixed(x, 2)
		}
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	var parts []string
	for i, p := range ps {
		if i == maxListedParams {
			parts = append(parts, "and "+strconv.Itoa(len(ps)-i)+" more")
			break
		}
		parts = append(parts, p.GetName()+" "+val(p, p.GetCurrent())+" (from "+val(p, p.GetStart())+")")
	}
	return strings.Join(parts, ", ")
}

// perftUnverified reports whether no unit of a perft job with units was
// computed by a second identity: its counts are no one's but one
// worker's (the pages say so beside the total).
func perftUnverified(j *arbiterv1.Job) bool {
	p := j.GetProgress()
	return p.GetUnitsTotal() > 0 && p.GetUnitsVerified() == 0
}

// dateOnly is t shifted by days as YYYY-MM-DD, "" for the zero time (the
// list's "to" date is stored as the day after it).
func dateOnly(t time.Time, days int) string {
	if t.IsZero() {
		return ""
	}
	return t.AddDate(0, 0, days).Format(time.DateOnly)
}
