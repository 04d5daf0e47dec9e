package web

import (
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamejob"
	"github.com/arbiter-chess/arbiter/coordinator/verifyjob"
)

type workerView struct {
	core.WorkerView
	Jobs     []string // the jobs it holds leases on
	Activity gamejob.Activity
	// BarredTunes are the running SPSA tunes it gets no more batches of.
	BarredTunes []string
	Live        bool // seen within three heartbeats
	Verifying   int  // verify units it holds
}

type workersData struct {
	Workers []workerView
	Rows    template.HTML
	Live    int
	Cores   uint32
}

// jobOfUnit names the job of a unit id: "JOB.N" for perft units and
// batches, "verify.SESSION.KEY" for verify units.
func jobOfUnit(unit string) string {
	if strings.HasPrefix(unit, verifyjob.Prefix) {
		rest := strings.TrimPrefix(unit, verifyjob.Prefix)
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			return verifyjob.Prefix + rest[:i]
		}
		return unit
	}
	if i := strings.LastIndexByte(unit, '.'); i > 0 {
		return unit[:i]
	}
	return unit
}

func (s *Server) workersPage(r *http.Request, v *view) error {
	act := s.cfg.Games.WorkerActivity()
	var barredTunes map[string][]string
	if s.cfg.Tunes != nil {
		barredTunes = s.cfg.Tunes.Barred()
	}
	d := &workersData{}
	live := 3 * s.cfg.Core.HeartbeatInterval()
	for _, w := range s.cfg.Core.Workers() {
		wv := workerView{WorkerView: w, Activity: act[w.ID], Live: v.Now.Sub(w.LastSeen) <= live,
			BarredTunes: barredTunes[w.ID]}
		seen := map[string]bool{}
		for _, u := range w.Units {
			j := jobOfUnit(u)
			if strings.HasPrefix(j, verifyjob.Prefix) {
				wv.Verifying++
				continue
			}
			if !seen[j] {
				seen[j] = true
				wv.Jobs = append(wv.Jobs, j)
			}
		}
		sort.Strings(wv.Jobs)
		if wv.Live {
			d.Live++
			d.Cores += w.Caps.Cores
		}
		d.Workers = append(d.Workers, wv)
	}
	d.Rows = workersRows(d.Workers, v.Now)
	v.Title, v.Nav, v.Page, v.tmpl = "Workers", "workers", d, "workers"
	v.Live = "/workers?live=1"
	v.Grafana = s.grafana("arbiter-workers", nil)
	return nil
}
