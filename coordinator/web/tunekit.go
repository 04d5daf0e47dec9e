package web

// What the SPSA kind's page (kinds/spsa, /tunes/{id}) uses of the pages
// beyond the page kit (pagekit.go): the cancel form of a job whose
// priority is fixed, the tests that verify a tune (the test kind's
// workload, testview.Tests), a parameter's value as the pages write it,
// and a parameter's trajectory chart.

import (
	"html/template"
	"math"
	"strconv"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// CancelForm is the data of the layout's "manage" template with the
// cancel form alone (priority and share shown as fixed) for running job
// j with its spec's priority and share, or nil when j is not running or
// the viewer may not manage it.
func (p *PageRequest) CancelForm(j *arbiterv1.Job, priority int32, share float64) any {
	if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || !p.v.Viewer.MayManage(j.GetSubmitter()) {
		return nil
	}
	return &manageForm{ID: j.GetJobId(), CSRF: p.v.CSRF, MinPrio: core.MinPriority, MaxPrio: core.MaxPriority,
		Priority: priority, Share: share, CancelOnly: true}
}

// Tests is the workload of match and SPRT tests (Config.Games), for a
// page that lists the tests of its job (a tune's verifications).
func (p *PageRequest) Tests() testview.Tests { return p.s.cfg.Games }

// ParamValue writes a tune parameter's value: whole numbers as they are,
// others to two decimals (four significant digits below 1).
func ParamValue(p *arbiterv1.SpsaParamState, x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 1:
		return fixed(x, 2)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// TrajectoryChart draws tune parameter p's value against the updates
// applied, its start dashed ("" before two points); n numbers the
// chart's ids on the page.
func TrajectoryChart(n int, p *arbiterv1.SpsaParamState, updates []uint64) template.HTML {
	return trajectoryChart(n, p, updates)
}

// sig is x to four significant digits.
func sig(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
