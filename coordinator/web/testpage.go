package web

import (
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// jobOf returns job id's snapshot when is accepts it, or a page saying it
// is not what (with its article) and where its page is.
func (s *Server) jobOf(id, what string, is func(*arbiterv1.Job) bool) (*arbiterv1.Job, error) {
	snap, err := s.jobSnapshot(id, true)
	if err != nil {
		return nil, err
	}
	j, ok := snap.(*arbiterv1.Job)
	if !ok || !is(j) {
		return nil, pageError(http.StatusNotFound, "Not "+what, "Job %s is not %s (its page: /jobs/%s).", clipQ(id), what, url.PathEscape(id))
	}
	return j, nil
}

// testJob returns test id's snapshot, or a page saying it is not one.
func (s *Server) testJob(id string) (*arbiterv1.Job, error) {
	return s.jobOf(id, "a match or SPRT test", func(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyTest) })
}

type workerRow struct {
	*arbiterv1.WorkerIncidents
	Owner    string
	BenchSig uint64
	Version  string
	Known    bool
}

// testManage is what the test's forms need.
type testManage struct {
	manageForm
	Running, Stopped, Manage, CanSubmit, SPRT bool
	// Pending: waits for an approver; its manager may withdraw it.
	Pending     bool
	Games       uint64
	Tags, Notes string
}

// workerTable is the per-worker table of a test's or a tune's page.
type workerTable struct {
	ID   string // the table's element id
	Of   string // "test" or "tune"
	Rows template.HTML
}

// manageForm is what the priority and cancel forms need.
type manageForm struct {
	ID               string
	CSRF             string
	MinPrio, MaxPrio int
	Priority         int32
	Share            float64
	// CancelOnly leaves the priority form out, for jobs whose priority
	// cannot change (SPSA tunes).
	CancelOnly bool
}

// shownTest is test id as viewer v may see it: a reader who is not signed
// in gets its counts as they stood when none of its batches was held for
// a replay (gamepair's PublicSnapshot), so that the page does not single
// out a checked batch among those counted.
func (s *Server) shownTest(id string, v *view) (*arbiterv1.Job, error) {
	j, err := s.testJob(id)
	if err != nil || v.Viewer.Signed {
		return j, err
	}
	pub, ok := s.cfg.Games.PublicSnapshot(id)
	if !ok {
		return j, nil
	}
	if s.cfg.Core.Pending(id) {
		pub = proto.Clone(pub).(*arbiterv1.Job)
		jobproto.MarkPending(pub)
	}
	return pub, nil
}

// ---- games ----

type gamesData struct {
	Job     *arbiterv1.Job
	Batches []testview.BatchInfo
	Rows    template.HTML
	Prev    string
	Next    string
	First   int
	Total   int
}

// batchesPerPage bounds the batches a games page lists.
const batchesPerPage = 100

func (s *Server) gamesPage(r *http.Request, v *view) error {
	id := r.PathValue("id")
	j, err := s.shownTest(id, v)
	if err != nil {
		return err
	}
	page, err := pageNumber(r.URL.Query())
	if err != nil {
		return err
	}
	bs, err := s.cfg.Games.Batches(r.Context(), id)
	if err != nil {
		return err
	}
	// The batches the shown counts hold (all of them for a signed-in
	// reader): those counted first, in counted order.
	for games, k := int64(0), 0; k < len(bs); k++ {
		if games += 2 * int64(bs[k].Pairs); games > int64(j.GetMatchProgress().GetGames()) {
			bs = bs[:k]
			break
		}
	}
	d := &gamesData{Job: j, Total: len(bs), First: (page - 1) * batchesPerPage}
	if d.First < len(bs) {
		d.Batches = bs[d.First:min(len(bs), d.First+batchesPerPage)]
	}
	d.Rows = batchRows(id, d.Batches)
	if page > 1 {
		d.Prev = "?page=" + strconv.Itoa(page-1)
	}
	if d.First+batchesPerPage < len(bs) {
		d.Next = "?page=" + strconv.Itoa(page+1)
	}
	v.Title, v.Nav, v.Page, v.tmpl = "Games of test "+id, "list", d, "games"
	return nil
}

// gameRef reads the test, batch and game of a game URL.
func (s *Server) gameRef(r *http.Request) (id string, batch, game int, err error) {
	id = r.PathValue("id")
	batch, err1 := strconv.Atoi(r.PathValue("batch"))
	game, err2 := strconv.Atoi(r.PathValue("game"))
	if err1 != nil || err2 != nil || batch < 0 || game < 0 {
		return "", 0, 0, pageError(http.StatusBadRequest, "Bad game", "batch %s, game %s: want numbers from 0.",
			clipQ(r.PathValue("batch")), clipQ(r.PathValue("game")))
	}
	if _, err := s.testJob(id); err != nil {
		return "", 0, 0, err
	}
	return id, batch, game, nil
}

type gameData struct {
	TestID      string
	Batch, Game int
	G           *pgnGame
	Ply         int
	FEN         string
	Last        string
	Board       template.HTML
	Prev, Next  string
	PGN         string
	Problem     string
	Rows        []moveRow
}

// moveRow is one move number of the move list.
type moveRow struct {
	No           int
	White, Black *pgnPly
}

func moveRows(plies []pgnPly) []moveRow {
	var rows []moveRow
	for i := range plies {
		p := &plies[i]
		if p.White || len(rows) == 0 {
			rows = append(rows, moveRow{No: p.Move})
		}
		if p.White {
			rows[len(rows)-1].White = p
		} else {
			rows[len(rows)-1].Black = p
		}
	}
	return rows
}

func (s *Server) gamePage(r *http.Request, v *view) error {
	id, batch, game, err := s.gameRef(r)
	if err != nil {
		return err
	}
	text, err := s.cfg.Games.PGN(r.Context(), id, batch, game)
	if err != nil {
		return err
	}
	d := &gameData{TestID: id, Batch: batch, Game: game, PGN: text}
	g, err := parsePGN(text)
	if err != nil {
		// A game the coordinator stored but cannot replay is still shown
		// as text.
		d.Problem = err.Error()
		g = &pgnGame{}
	}
	d.G = g
	d.Rows = moveRows(g.Plies)
	d.Ply = len(g.Plies)
	if p := r.URL.Query().Get("ply"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > len(g.Plies) {
			return pageError(http.StatusBadRequest, "Bad ply", "ply %s: this game has plies 0 to %d.", clipQ(p), len(g.Plies))
		}
		d.Ply = n
	}
	d.FEN = g.Start
	if d.Ply > 0 && d.Ply <= len(g.Plies) {
		d.FEN, d.Last = g.Plies[d.Ply-1].FEN, g.Plies[d.Ply-1].UCI
	}
	if d.FEN != "" {
		d.Board = boardSVG(d.FEN, d.Last, 48)
	}
	if d.Ply > 0 {
		d.Prev = "?ply=" + strconv.Itoa(d.Ply-1)
	}
	if d.Ply < len(g.Plies) {
		d.Next = "?ply=" + strconv.Itoa(d.Ply+1)
	}
	v.Title = fmt.Sprintf("Game %d of batch %d, test %s", game, batch, id)
	v.Nav, v.Page, v.tmpl = "list", d, "game"
	return nil
}

// downloadPGN streams every stored game of a test.
func (s *Server) downloadPGN(w http.ResponseWriter, r *http.Request, _ viewer) error {
	id := r.PathValue("id")
	if _, err := s.testJob(id); err != nil {
		return err
	}
	started := false
	err := s.cfg.Games.PGNs(r.Context(), id, func(p string) error {
		if !started {
			w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="`+safeName(id)+`.pgn"`)
			started = true
		}
		if _, err := io.WriteString(w, p); err != nil {
			return err
		}
		if !strings.HasSuffix(p, "\n\n") {
			_, err := io.WriteString(w, "\n")
			return err
		}
		return nil
	})
	if err != nil && started {
		return nil // the response is under way; the client sees it cut
	}
	if err == nil && !started {
		w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+safeName(id)+`.pgn"`)
	}
	return err
}

func (s *Server) downloadGame(w http.ResponseWriter, r *http.Request, _ viewer) error {
	id, batch, game, err := s.gameRef(r)
	if err != nil {
		return err
	}
	text, err := s.cfg.Games.PGN(r.Context(), id, batch, game)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%d-%d.pgn"`, safeName(id), batch, game))
	io.WriteString(w, text)
	return nil
}

// safeName keeps the letters, digits and '-' of a job id for a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, id)
}
