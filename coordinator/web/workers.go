package web

import (
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

type workerView struct {
	core.WorkerView
	Jobs     []string // the jobs it holds leases on
	Activity testview.Activity
	// BarredTunes are the running SPSA tunes it gets no more batches of.
	BarredTunes []string
	Live        bool // seen within three heartbeats
	Verifying   int  // verify units it holds
	// Blocked says why an admin blocked it ("" when not).
	Blocked string
}

type workersData struct {
	Workers []workerView
	Rows    template.HTML
	Live    int
	Cores   uint32
	// Blocks are the blocked workers and identities; Admin shows the forms
	// that change them.
	Blocks []core.Block
	Admin  bool
	CSRF   string
	// Trust is the trust of every identity a registered worker has or
	// that has a stored record (gamepair/trust.go).
	Trust          []gamepair.TrustLevel
	TrustThreshold int
}

// Barrer is a workload that bars workers from its jobs (the SPSA kind's
// tunes; gamepair.Set.Barred): by worker id, the jobs that bar it.
type Barrer interface {
	Barred() map[string][]string
}

// barrerOf is the SPSA kind's workload of c (jobkind.SPSA), nil when c
// serves none.
func barrerOf(c *core.Core) Barrer {
	for _, wl := range c.Workloads() {
		if b, ok := wl.(Barrer); ok && wl.Kind() == jobkind.SPSA {
			return b
		}
	}
	return nil
}

// jobOfUnit names the job of a unit id: "JOB.N" for perft units and
// batches, "verify.SESSION.KEY" for verify units.
func jobOfUnit(unit string) string {
	if strings.HasPrefix(unit, verifyproto.JobPrefix) {
		rest := strings.TrimPrefix(unit, verifyproto.JobPrefix)
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			return verifyproto.JobPrefix + rest[:i]
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
			BarredTunes: barredTunes[w.ID], Blocked: s.cfg.Core.BlockedWhy(w.ID)}
		seen := map[string]bool{}
		for _, u := range w.Units {
			j := jobOfUnit(u)
			if strings.HasPrefix(j, verifyproto.JobPrefix) {
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
	owners := make([]string, 0, len(d.Workers))
	for _, w := range d.Workers {
		owners = append(owners, w.Owner)
	}
	d.Trust, d.TrustThreshold = s.cfg.Trust.Levels(owners...), gamepair.TrustThreshold
	d.Blocks = s.cfg.Core.Blocked()
	d.Admin = v.Viewer.IsAdmin()
	d.CSRF = v.CSRF
	v.Title, v.Nav, v.Page, v.tmpl = "Workers", "workers", d, "workers"
	v.Live = "/workers?live=1"
	v.Grafana = s.grafana("arbiter-workers", nil)
	return nil
}

// blockWorker blocks or unblocks a worker or an identity (admins; the
// core checks the role again and records the change).
func (s *Server) blockWorker(w http.ResponseWriter, r *http.Request, vw viewer) error {
	workerID, ident := strings.TrimSpace(r.PostFormValue("worker")), strings.TrimSpace(r.PostFormValue("identity"))
	blocked := r.PostFormValue("action") != "unblock"
	if workerID == "" && ident == "" {
		return bad("worker or identity: give one of them")
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	liar := blocked && r.PostFormValue("liar") == "on"
	if liar && (ident == "" || s.cfg.DeclareLiar == nil) {
		return bad("found lying: name the identity (not a worker id); its results are purged from every job it took part in")
	}
	if _, err := s.cfg.Core.SetBlock(r.Context(), vw.identity(), workerID, ident, blocked, reason); err != nil {
		return err
	}
	if liar {
		if _, err := s.cfg.DeclareLiar(r.Context(), vw.identity(), ident, reason); err != nil {
			return err
		}
	}
	http.Redirect(w, r, "/workers", http.StatusSeeOther)
	return nil
}
