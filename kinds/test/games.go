package test

import (
	"embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The games of a test: the page of its batches with links to each game
// (/tests/{id}/games), a game's viewer with its board at any ply
// (/tests/{id}/games/{batch}/{game}), and the PGN downloads of all its
// games and of one (web.RegisterDownload). They read the games through
// the test workload the pages were given (web's Config.Games).

//go:embed templates/games.html templates/game.html
var gamesTemplates embed.FS

func init() {
	web.RegisterPage(web.Page{Name: "games", Templates: gamesTemplates, Pattern: "GET /tests/{id}/games", Render: gamesPage})
	web.RegisterPage(web.Page{Name: "game", Templates: gamesTemplates, Pattern: "GET /tests/{id}/games/{batch}/{game}", Render: gamePage})
	web.RegisterDownload(web.Download{Pattern: "GET /tests/{id}/pgn", Serve: downloadPGN})
	web.RegisterDownload(web.Download{Pattern: "GET /tests/{id}/games/{batch}/{game}/pgn", Serve: downloadGame})
}

// gamesData is what templates/games.html reads as .Page.
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

func gamesPage(pr *web.PageRequest) error {
	id := pr.R.PathValue("id")
	j, err := pr.TestJob(id)
	if err != nil {
		return err
	}
	page, err := pr.PageNumber()
	if err != nil {
		return err
	}
	bs, err := pr.Tests().Batches(pr.R.Context(), id)
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
	pr.ShowUpdating("Games of test "+id, d, false, page)
	return nil
}

// batchRows renders a games page's rows: each batch with links to its
// games. They are written here rather than by html/template, whose
// reflection is slow for a page of a hundred batches of many games
// (coordinator/web's BenchmarkPages); every text is escaped.
func batchRows(testID string, bs []testview.BatchInfo) template.HTML {
	var b strings.Builder
	b.Grow(len(bs) * 900)
	cell := func(text string) { b.WriteString("<td>" + html.EscapeString(text) + "</td>") }
	base := "/tests/" + url.PathEscape(testID) + "/games/"
	for _, bt := range bs {
		idx := strconv.Itoa(bt.Index)
		b.WriteString(`<tr><td class="num">` + idx + "</td>")
		cell(bt.WorkerID)
		cell(web.When(bt.At))
		cell(strconv.FormatInt(bt.Wins, 10) + " / " + strconv.FormatInt(bt.Draws, 10) + " / " + strconv.FormatInt(bt.Losses, 10))
		b.WriteString("<td>")
		for g := 0; g < 2*bt.Pairs; g++ {
			gs := strconv.Itoa(g)
			b.WriteString(`<a href="` + base + idx + "/" + gs + `" aria-label="batch ` + idx + " game " + gs + `">` + gs + "</a> ")
		}
		b.WriteString("</td></tr>\n")
	}
	return template.HTML(b.String())
}

// isTest accepts a match or SPRT test.
func isTest(j *arbiterv1.Job) bool { return jobkind.Is(j, jobkind.FamilyTest) }

// gameRef reads the batch and game of a game URL of test id, once the
// test is known (job looks it up).
func gameRef(r *http.Request, job func(id string) (*arbiterv1.Job, error)) (id string, batch, game int, err error) {
	id = r.PathValue("id")
	batch, err1 := strconv.Atoi(r.PathValue("batch"))
	game, err2 := strconv.Atoi(r.PathValue("game"))
	if err1 != nil || err2 != nil || batch < 0 || game < 0 {
		return "", 0, 0, web.Problem(http.StatusBadRequest, "Bad game", "batch %s, game %s: want numbers from 0.",
			apierr.Q(r.PathValue("batch")), apierr.Q(r.PathValue("game")))
	}
	if _, err := job(id); err != nil {
		return "", 0, 0, err
	}
	return id, batch, game, nil
}

// gameData is what templates/game.html reads as .Page.
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

func gamePage(pr *web.PageRequest) error {
	id, batch, game, err := gameRef(pr.R, func(id string) (*arbiterv1.Job, error) { return pr.Job(id, "a match or SPRT test", isTest) })
	if err != nil {
		return err
	}
	text, err := pr.Tests().PGN(pr.R.Context(), id, batch, game)
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
	if p := pr.R.URL.Query().Get("ply"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > len(g.Plies) {
			return web.Problem(http.StatusBadRequest, "Bad ply", "ply %s: this game has plies 0 to %d.", apierr.Q(p), len(g.Plies))
		}
		d.Ply = n
	}
	d.FEN = g.Start
	if d.Ply > 0 && d.Ply <= len(g.Plies) {
		d.FEN, d.Last = g.Plies[d.Ply-1].FEN, g.Plies[d.Ply-1].UCI
	}
	if d.FEN != "" {
		d.Board = pr.BoardAfter(d.FEN, d.Last, 48)
	}
	if d.Ply > 0 {
		d.Prev = "?ply=" + strconv.Itoa(d.Ply-1)
	}
	if d.Ply < len(g.Plies) {
		d.Next = "?ply=" + strconv.Itoa(d.Ply+1)
	}
	pr.ShowUpdating(fmt.Sprintf("Game %d of batch %d, test %s", game, batch, id), d, false, 0)
	return nil
}

// pgnHeaders marks the answer a PGN file named name.
func pgnHeaders(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.pgn"`)
}

// downloadPGN streams every stored game of a test.
func downloadPGN(d *web.DownloadRequest) error {
	id, w := d.R.PathValue("id"), d.W
	if _, err := d.TestJob(id); err != nil {
		return err
	}
	started := false
	err := d.Tests().PGNs(d.R.Context(), id, func(p string) error {
		if !started {
			pgnHeaders(w, safeName(id))
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
		pgnHeaders(w, safeName(id))
	}
	return err
}

func downloadGame(d *web.DownloadRequest) error {
	id, batch, game, err := gameRef(d.R, d.TestJob)
	if err != nil {
		return err
	}
	text, err := d.Tests().PGN(d.R.Context(), id, batch, game)
	if err != nil {
		return err
	}
	pgnHeaders(d.W, fmt.Sprintf("%s-%d-%d", safeName(id), batch, game))
	io.WriteString(d.W, text)
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
