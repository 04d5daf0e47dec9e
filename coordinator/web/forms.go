package web

import (
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The forms: submit a test (SPRT or match) or a perft job, cancel a job,
// change a running job's priority. Each field is checked here with an
// error that names it, and the spec is checked again by its workload (the
// same checks as a gRPC submission); nothing is stored unless both pass.

// testForm holds the submit form's fields as typed, for showing them again.
type testForm struct {
	Kind                           string // "sprt" or "match"
	EngineA, EngineB, Each         string
	RepoA, RefA, RepoB, RefB       string // the engines' git sources (formsources.go)
	Book, BookOrder, Seed, Plies   string
	Games, Elo0, Elo1, Alpha, Beta string
	Model                          string
	BatchPairs, Priority, Share    string
	RefNPS, Event                  string
	Tags, Notes                    string
	// files and nets are the engines' uploaded files (not shown again:
	// a browser does not refill a file input).
	files, nets [2]*multipart.FileHeader
}

type perftForm struct {
	FEN, Depth, Verify, SplitPly string
	Chess960                     bool
	Priority, Share              string
}

type submitData struct {
	Books  []string
	Test   testForm
	Perft  perftForm
	Error  string
	Which  string // the form the error is about: "test" or "perft"
	Field  string // the field the error is about ("": the form)
	Models []string
	// Preview is the diff between the engines' commits, before submitting.
	Preview *diffView
	// Repos are the repositories past tests came from (the shortcut).
	Repos []string
}

func defaultForms() (testForm, perftForm) {
	return testForm{Kind: "sprt", EngineA: "name=new,builtin", EngineB: "name=base,builtin", Each: "nodes=2000",
			BookOrder: "random", Seed: "1", Elo0: "0", Elo1: "5", Alpha: "0.05", Beta: "0.05", Model: "normalized", Priority: "0", Share: "1"},
		perftForm{FEN: engine.StartFEN, Depth: "6", Verify: "0", Priority: "0", Share: "1"}
}

// books lists the opening books of BooksDir.
func (s *Server) books() []string {
	if s.cfg.BooksDir == "" {
		return nil
	}
	ents, err := os.ReadDir(s.cfg.BooksDir)
	if err != nil {
		s.log.Warn("books directory unreadable", zap.String("dir", s.cfg.BooksDir), zap.Error(err))
		return nil
	}
	var out []string
	for _, e := range ents {
		n := strings.ToLower(e.Name())
		if !e.IsDir() && (strings.HasSuffix(n, ".epd") || strings.HasSuffix(n, ".pgn") || strings.HasSuffix(n, ".zip")) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func (s *Server) submitPage(r *http.Request, v *view) error {
	t, p := defaultForms()
	if b := s.books(); len(b) > 0 {
		t.Book = b[0]
		for _, name := range b {
			if strings.HasSuffix(name, ".epd") {
				t.Book = name
				break
			}
		}
	}
	t = s.branchShortcut(r, t)
	v.Title, v.Nav, v.tmpl = "Submit", "submit", "submit"
	v.Page = &submitData{Books: s.books(), Test: t, Perft: p, Models: []string{"normalized", "logistic", "bayeselo"}, Repos: s.knownRepositories()}
	return nil
}

// formError shows the submit page again with the values and the problem.
func (s *Server) formError(w http.ResponseWriter, r *http.Request, vw viewer, which string, t testForm, p perftForm, err error) {
	we := asWebError(err)
	if we.Status >= 500 || we.SignIn || we.Status == http.StatusForbidden {
		s.fail(w, r, vw, err)
		return
	}
	v := &view{Title: "Submit: " + we.Title, Nav: "submit", Viewer: vw, Now: s.cfg.Now(), status: we.Status}
	v.CSRF = s.csrfToken(w, r)
	v.Page = &submitData{Books: s.books(), Test: t, Perft: p, Error: we.Msg, Which: which, Field: formFieldOf(err),
		Models: []string{"normalized", "logistic", "bayeselo"}, Repos: s.knownRepositories()}
	s.render(w, v, "submit")
}

func bad(format string, args ...any) error { return apierr.Invalid(format, args...) }

func parseInt(field, s string, lo, hi int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, bad("%s %s: want a whole number from %d to %d", field, clipQ(s), lo, hi)
	}
	return n, nil
}

func parseFloat(field, s string, lo, hi float64) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, bad("%s %s: want a number from %g to %g", field, clipQ(s), lo, hi)
	}
	return x, nil
}

func readTestForm(r *http.Request) testForm {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return testForm{Kind: f("kind"), EngineA: f("engine_a"), EngineB: f("engine_b"), Each: f("each"),
		RepoA: f("engine_a_repo"), RefA: f("engine_a_ref"), RepoB: f("engine_b_repo"), RefB: f("engine_b_ref"), Book: f("book"),
		BookOrder: f("book_order"), Seed: f("seed"), Plies: f("plies"), Games: f("games"), Elo0: f("elo0"), Elo1: f("elo1"),
		Alpha: f("alpha"), Beta: f("beta"), Model: f("model"), BatchPairs: f("batch_pairs"), Priority: f("priority"),
		Share: f("throughput"), RefNPS: f("reference_nps"), Event: f("event"), Tags: f("tags"),
		Notes: strings.ReplaceAll(f("notes"), "\r\n", "\n"),
		files: [2]*multipart.FileHeader{formFile(r, "engine_a_file"), formFile(r, "engine_b_file")},
		nets:  [2]*multipart.FileHeader{formFile(r, "engine_a_net"), formFile(r, "engine_b_net")}}
}

// defaultHangTimeout is arbiter submit's --hangtimeout default.
const defaultHangTimeout = 30 * time.Second

// maxBookBytes bounds an uploaded book.
const maxBookBytes = 8 << 20

// loadBook reads the chosen book of BooksDir or the uploaded one, in file
// order, with its name.
func (s *Server) loadBook(r *http.Request, f testForm, plies int) (*match.Book, string, error) {
	var upload *multipart.FileHeader
	if r.MultipartForm != nil {
		if fs := r.MultipartForm.File["book_file"]; len(fs) > 0 && fs[0].Size > 0 {
			upload = fs[0]
		}
	}
	if upload != nil {
		name := filepath.Base(upload.Filename)
		ext := strings.ToLower(filepath.Ext(name))
		if ext != ".epd" && ext != ".pgn" && ext != ".zip" && ext != ".fen" {
			return nil, "", bad("book file %s: want an .epd, .pgn or .zip file", clipQ(name))
		}
		if upload.Size > maxBookBytes {
			return nil, "", bad("book file %s: %d bytes, at most %d", clipQ(name), upload.Size, maxBookBytes)
		}
		in, err := upload.Open()
		if err != nil {
			return nil, "", bad("book file %s: %v", clipQ(name), err)
		}
		defer in.Close()
		tmp, err := os.CreateTemp("", "arbiter-book-*"+ext)
		if err != nil {
			return nil, "", err
		}
		defer os.Remove(tmp.Name())
		_, err = io.Copy(tmp, io.LimitReader(in, maxBookBytes))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, "", err
		}
		book, err := match.LoadBook(match.BookOptions{Path: tmp.Name(), Order: "sequential", Plies: plies})
		if err != nil {
			return nil, "", bad("book file %s: %s", clipQ(name), strings.ReplaceAll(err.Error(), tmp.Name(), name))
		}
		return book, name, nil
	}
	if f.Book == "" {
		return nil, "", bad("opening book: choose one or upload a file")
	}
	known := false
	for _, b := range s.books() {
		known = known || b == f.Book
	}
	if !known {
		return nil, "", bad("opening book %s: not one of the coordinator's books", clipQ(f.Book))
	}
	book, err := match.LoadBook(match.BookOptions{Path: filepath.Join(s.cfg.BooksDir, f.Book), Order: "sequential", Plies: plies})
	if err != nil {
		return nil, "", bad("opening book %s: %v", clipQ(f.Book), err)
	}
	return book, f.Book, nil
}

// matchSpec builds a test's spec from the form.
func (s *Server) matchSpec(r *http.Request, f testForm) (*arbiterv1.MatchSpec, error) {
	if f.Kind != "sprt" && f.Kind != "match" {
		return nil, bad("kind %s: want sprt or match", clipQ(f.Kind))
	}
	var each enginespec.Spec
	if f.Each != "" {
		e, err := enginespec.Parse(f.Each, enginespec.Each)
		if err != nil {
			return nil, bad("time control and settings: %v", err)
		}
		each = e
	}
	lim, err := enginespec.LimitsOf(each.Limits)
	if err != nil {
		return nil, bad("time control %s: %v", clipQ(f.Each), err)
	}
	tc, err := matchspec.LimitsToProto(lim)
	if err != nil {
		return nil, bad("time control %s: give one of tc=10+0.1, nodes=N, depth=D or movetime=MS", clipQ(f.Each))
	}
	if err := matchspec.CheckPlayable(lim); err != nil {
		return nil, bad("time control %s: %v", clipQ(f.Each), err)
	}
	var engines [2]*arbiterv1.EngineSpec
	for i, e := range f.engines() {
		if engines[i], err = engineSpec(e, each); err != nil {
			return nil, err
		}
	}
	plies, err := parseInt("PGN plies", f.Plies, 0, 1000)
	if err != nil {
		return nil, err
	}
	order := f.BookOrder
	if order == "" {
		order = "sequential"
	}
	if order != "sequential" && order != "random" {
		return nil, bad("book order %s: want sequential or random", clipQ(order))
	}
	seed, err := parseInt("seed", f.Seed, 0, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	if seed == 0 {
		seed = 1
	}
	games, err := parseInt("games", f.Games, 0, testview.MaxGames)
	if err != nil {
		return nil, err
	}
	batch, err := parseInt("batch pairs", f.BatchPairs, 0, testview.MaxBatchPairs)
	if err != nil {
		return nil, err
	}
	prio, err := parseInt("priority", f.Priority, core.MinPriority, core.MaxPriority)
	if err != nil {
		return nil, err
	}
	share, err := parseFloat("throughput", f.Share, 0, core.MaxShare)
	if err != nil {
		return nil, err
	}
	ref, err := parseInt("reference nps", f.RefNPS, 0, 1e12)
	if err != nil {
		return nil, err
	}
	if len(f.Event) > 200 {
		return nil, bad("event %s: at most 200 bytes", clipQ(f.Event))
	}
	tags, err := testview.CheckTags(strings.FieldsFunc(f.Tags, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }))
	if err != nil {
		return nil, err
	}
	if err := testview.CheckNotes(f.Notes); err != nil {
		return nil, err
	}
	spec := &arbiterv1.MatchSpec{EngineA: engines[0], EngineB: engines[1], TimeControl: tc, BookOrder: order, Seed: uint64(seed),
		Games: uint64(games), Priority: int32(prio), Throughput: share, BatchPairs: uint32(batch), ReferenceNps: uint64(ref), Event: f.Event,
		HangTimeout: durationpb.New(defaultHangTimeout), Tags: tags, Notes: f.Notes}
	if f.Kind == "sprt" {
		if spec.Sprt, err = sprtParams(f); err != nil {
			return nil, err
		}
	} else if games == 0 {
		return nil, bad("games: a match needs a number of games (even)")
	}
	book, name, err := s.loadBook(r, f, int(plies))
	if err != nil {
		return nil, err
	}
	spec.BookName = name
	for _, o := range book.Openings {
		spec.Openings = append(spec.Openings, matchspec.OpeningToProto(o))
		spec.Chess960 = spec.Chess960 || o.Chess960
	}
	return spec, nil
}

// sprtParams reads the form's SPRT bounds and error rates.
func sprtParams(f testForm) (*arbiterv1.SprtParams, error) {
	elo0, err := parseFloat("elo0", f.Elo0, -1000, 1000)
	if err != nil {
		return nil, err
	}
	elo1, err := parseFloat("elo1", f.Elo1, -1000, 1000)
	if err != nil {
		return nil, err
	}
	alpha, err := parseFloat("alpha", f.Alpha, 0, 0.5)
	if err != nil {
		return nil, err
	}
	beta, err := parseFloat("beta", f.Beta, 0, 0.5)
	if err != nil {
		return nil, err
	}
	model, err := sprt.ParseModel(f.Model)
	if err != nil {
		return nil, bad("SPRT model: %v", err)
	}
	p := sprt.Params{Elo0: elo0, Elo1: elo1, Alpha: alpha, Beta: beta, Model: model}
	if p.Alpha == 0 {
		p.Alpha = 0.05
	}
	if p.Beta == 0 {
		p.Beta = 0.05
	}
	if err := p.Validate(); err != nil {
		return nil, bad("SPRT: %v", err)
	}
	return &arbiterv1.SprtParams{Elo0: p.Elo0, Elo1: p.Elo1, Alpha: p.Alpha, Beta: p.Beta, Model: string(p.Model)}, nil
}

func (s *Server) submitTest(w http.ResponseWriter, r *http.Request, vw viewer) error {
	f := readTestForm(r)
	_, pf := defaultForms()
	spec, err := s.matchSpec(r, f)
	if err == nil {
		err = s.storeUploads(r.Context(), vw, f, [2]*arbiterv1.EngineSpec{spec.EngineA, spec.EngineB})
	}
	if err == nil {
		err = s.importEngines(r.Context(), vw, f, [2]*arbiterv1.EngineSpec{spec.EngineA, spec.EngineB})
	}
	if err == nil {
		var ref core.JobRef
		if ref, err = s.cfg.Core.Create(r.Context(), vw.identity(), testview.Kind, spec); err == nil {
			s.log.Info("test submitted on the web", zap.String("job_id", ref.ID), zap.String("identity", vw.Name))
			http.Redirect(w, r, "/tests/"+url.PathEscape(ref.ID), http.StatusSeeOther)
			return nil
		}
	}
	s.formError(w, r, vw, "test", f, pf, err)
	return nil
}

func (s *Server) submitPerft(w http.ResponseWriter, r *http.Request, vw viewer) error {
	tf, _ := defaultForms()
	p := perftForm{FEN: strings.TrimSpace(r.PostFormValue("fen")), Depth: strings.TrimSpace(r.PostFormValue("depth")),
		Verify: strings.TrimSpace(r.PostFormValue("verify")), SplitPly: strings.TrimSpace(r.PostFormValue("split_ply")),
		Chess960: r.PostFormValue("chess960") != "", Priority: strings.TrimSpace(r.PostFormValue("priority")),
		Share: strings.TrimSpace(r.PostFormValue("throughput"))}
	spec, err := perftSpec(p)
	if err == nil {
		var ref core.JobRef
		if ref, err = s.cfg.Core.Create(r.Context(), vw.identity(), jobkind.Perft, spec); err == nil {
			s.log.Info("perft job submitted on the web", zap.String("job_id", ref.ID), zap.String("identity", vw.Name))
			http.Redirect(w, r, "/perft/"+url.PathEscape(ref.ID), http.StatusSeeOther)
			return nil
		}
	}
	s.formError(w, r, vw, "perft", tf, p, err)
	return nil
}

func perftSpec(p perftForm) (*arbiterv1.PerftSpec, error) {
	if p.FEN == "" {
		p.FEN = engine.StartFEN
	}
	if len(p.FEN) > 256 {
		return nil, bad("FEN %s: longer than 256 bytes", clipQ(p.FEN))
	}
	if _, err := engine.ParseFEN(p.FEN); err != nil {
		return nil, bad("invalid FEN %s: %v", clipQ(p.FEN), err)
	}
	if p.Depth == "" {
		return nil, bad("depth: missing")
	}
	depth, err := parseInt("depth", p.Depth, 1, engine.MaxPerftDepth)
	if err != nil {
		return nil, err
	}
	verify, err := parseFloat("verify fraction", p.Verify, 0, 1)
	if err != nil {
		return nil, err
	}
	split, err := parseInt("split ply", p.SplitPly, 0, depth)
	if err != nil {
		return nil, err
	}
	prio, err := parseInt("priority", p.Priority, core.MinPriority, core.MaxPriority)
	if err != nil {
		return nil, err
	}
	share, err := parseFloat("throughput", p.Share, 0, core.MaxShare)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.PerftSpec{Fen: p.FEN, Depth: uint32(depth), VerifyFraction: verify, SplitPly: uint32(split), Chess960: p.Chess960,
		Priority: int32(prio), Throughput: share}, nil
}

// backTo is the page of job id.
func (s *Server) backTo(id string) string {
	if snap, err := s.jobSnapshot(id, false); err == nil {
		if j, ok := snap.(*arbiterv1.Job); ok {
			return jobURL(j)
		}
	}
	return "/"
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	if err := s.cfg.Core.Cancel(r.Context(), vw.identity(), id, "cancelled by "+vw.Name+" on the web pages"); err != nil {
		return err
	}
	s.log.Info("job cancelled on the web", zap.String("job_id", id), zap.String("identity", vw.Name))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

func (s *Server) setPriority(w http.ResponseWriter, r *http.Request, vw viewer) error {
	id := r.PathValue("id")
	ps, ss := strings.TrimSpace(r.PostFormValue("priority")), strings.TrimSpace(r.PostFormValue("throughput"))
	if ps == "" || ss == "" {
		return bad("priority and throughput are both required")
	}
	prio, err := parseInt("priority", ps, core.MinPriority, core.MaxPriority)
	if err != nil {
		return err
	}
	share, err := parseFloat("throughput", ss, 0, core.MaxShare)
	if err != nil {
		return err
	}
	if share == 0 {
		return bad("throughput %s: must be above 0", clipQ(ss))
	}
	if err := s.cfg.Core.SetPriority(r.Context(), vw.identity(), id, int32(prio), share); err != nil {
		return err
	}
	s.log.Info("job priority changed on the web", zap.String("job_id", id), zap.String("identity", vw.Name),
		zap.Int64("priority", prio), zap.Float64("throughput", share))
	http.Redirect(w, r, s.backTo(id), http.StatusSeeOther)
	return nil
}

// jobRedirect sends /jobs/{id} to the job's page.
func (s *Server) jobRedirect(w http.ResponseWriter, r *http.Request, _ viewer) error {
	id := r.PathValue("id")
	snap, err := s.jobSnapshot(id, false)
	if err != nil {
		if strings.HasPrefix(id, "verify.") {
			http.Redirect(w, r, "/verify/"+url.PathEscape(strings.TrimPrefix(id, "verify.")), http.StatusSeeOther)
			return nil
		}
		return err
	}
	http.Redirect(w, r, jobURL(snap.(*arbiterv1.Job)), http.StatusSeeOther)
	return nil
}
