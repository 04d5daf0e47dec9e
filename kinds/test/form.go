package test

import (
	"embed"
	"math"
	"mime/multipart"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The SPRT or match form of the submit page (/submit): its section
// (web.RegisterFormSection, with its own templates/testform.html, which
// also holds the shortcut "test a branch against the default branch"),
// and its routes, POST /submit/test (create the test) and POST
// /submit/preview (show the diff between the engines' commits, creating
// nothing), through web.RegisterRoute, so admission's table decides their
// role, CSRF check and body limit from the headers before the body is
// read. Each field is checked here with an error that names it, and the
// spec is checked again by the workload; the engines' inputs, their
// uploads and git sources, and the books are web's form kit
// (web.FormRequest).

//go:embed templates/testform.html
var formTemplates embed.FS

// formName is the section's name.
const formName = "testform"

func init() {
	web.RegisterFormSection(web.FormSection{Name: formName, Templates: formTemplates, Order: 10, Noun: "test",
		Blank: func(kit *web.FormRequest) any { return page(kit, defaultForm()) }, Fill: fillForm})
	web.RegisterRoute(web.Route{Pattern: "POST /submit/test", Serve: submitTest})
	web.RegisterRoute(web.Route{Pattern: "POST /submit/preview", Serve: previewTest})
}

// testForm holds the submit form's fields as typed, for showing them again.
type testForm struct {
	Kind                           string // "sprt" or "match"
	EngineA, EngineB, Each         string
	RepoA, RefA, RepoB, RefB       string // the engines' git sources
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

// testPage is what the form's templates read (web.FormSectionData.Form).
type testPage struct {
	Test   testForm
	Books  []string
	Models []string
	// Preview is the diff between the engines' commits, before submitting.
	Preview *web.DiffPreview
	// Repos are the repositories past tests came from (the shortcut).
	Repos []string
}

// models are the SPRT models the form offers.
var models = []string{"normalized", "logistic", "bayeselo"}

func defaultForm() testForm {
	return testForm{Kind: "sprt", EngineA: "name=new,builtin", EngineB: "name=base,builtin", Each: "nodes=2000",
		BookOrder: "random", Seed: "1", Elo0: "0", Elo1: "5", Alpha: "0.05", Beta: "0.05", Model: "normalized", Priority: "0", Share: "1"}
}

// page is the form's data with f as typed.
func page(kit *web.FormRequest, f testForm) *testPage {
	return &testPage{Test: f, Books: kit.Books(), Models: models, Repos: kit.KnownRepositories()}
}

// fillForm is the form on GET /submit: the first EPD book chosen (else
// the first book), and the shortcut's branch when asked.
func fillForm(kit *web.FormRequest) any {
	t := defaultForm()
	if b := kit.Books(); len(b) > 0 {
		t.Book = b[0]
		for _, name := range b {
			if strings.HasSuffix(name, ".epd") {
				t.Book = name
				break
			}
		}
	}
	return page(kit, branchShortcut(kit, t))
}

// branchShortcut fills the form for "test this branch against main" of a
// repository the farm knows (GET /submit?repo=URL&branch=B): engine A the
// branch, engine B the repository's default branch, both built as the
// newest engine of that repository was. Anything else leaves the form as
// it was; the submission checks everything again.
func branchShortcut(kit *web.FormRequest, t testForm) testForm {
	q := kit.R.URL.Query()
	repo, branch := strings.TrimSpace(q.Get("repo")), strings.TrimSpace(q.Get("branch"))
	if repo == "" || branch == "" {
		return t
	}
	b, exe, ok := kit.KnownRepository(repo)
	if !ok {
		return t
	}
	build := ",build=" + web.QuoteValue(b)
	if exe != "" {
		build += ",exe=" + web.QuoteValue(exe)
	}
	t.RepoA, t.RefA, t.RepoB, t.RefB = repo, branch, repo, "HEAD"
	t.EngineA, t.EngineB = "name="+web.QuoteValue(branch)+build, "name=main"+build
	return t
}

// engines are the form's engines' inputs, A then B.
func (f testForm) engines() [2]web.EngineFields {
	return [2]web.EngineFields{{Which: "engine A", ID: "engine_a", Spec: f.EngineA, Repo: f.RepoA, Ref: f.RefA, File: f.files[0], Net: f.nets[0]},
		{Which: "engine B", ID: "engine_b", Spec: f.EngineB, Repo: f.RepoB, Ref: f.RefB, File: f.files[1], Net: f.nets[1]}}
}

// engineInput is one engine's inputs as the form shows them.
type engineInput struct {
	ID, Letter, Role string
	Spec, Repo, Ref  string
}

// EngineInputs are the engines' inputs of the form, A then B.
func (d *testPage) EngineInputs() []engineInput {
	var out []engineInput
	for i, e := range d.Test.engines() {
		out = append(out, engineInput{ID: e.ID, Letter: [2]string{"A", "B"}[i], Role: [2]string{"under test", "baseline"}[i],
			Spec: e.Spec, Repo: e.Repo, Ref: e.Ref})
	}
	return out
}

func readTestForm(a *web.ActionRequest) testForm {
	r := a.R
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return testForm{Kind: f("kind"), EngineA: f("engine_a"), EngineB: f("engine_b"), Each: f("each"),
		RepoA: f("engine_a_repo"), RefA: f("engine_a_ref"), RepoB: f("engine_b_repo"), RefB: f("engine_b_ref"), Book: f("book"),
		BookOrder: f("book_order"), Seed: f("seed"), Plies: f("plies"), Games: f("games"), Elo0: f("elo0"), Elo1: f("elo1"),
		Alpha: f("alpha"), Beta: f("beta"), Model: f("model"), BatchPairs: f("batch_pairs"), Priority: f("priority"),
		Share: f("throughput"), RefNPS: f("reference_nps"), Event: f("event"), Tags: f("tags"),
		Notes: strings.ReplaceAll(f("notes"), "\r\n", "\n"),
		files: [2]*multipart.FileHeader{web.FormFile(r, "engine_a_file"), web.FormFile(r, "engine_b_file")},
		nets:  [2]*multipart.FileHeader{web.FormFile(r, "engine_a_net"), web.FormFile(r, "engine_b_net")}}
}

// defaultHangTimeout is arbiter submit's --hangtimeout default.
const defaultHangTimeout = 30 * time.Second

// formSpec builds a test's spec from the form, its book read through the
// kit (the coordinator's or the uploaded one).
func formSpec(kit *web.FormRequest, f testForm) (*arbiterv1.MatchSpec, error) {
	if f.Kind != "sprt" && f.Kind != "match" {
		return nil, web.Bad("kind %s: want sprt or match", apierr.Q(f.Kind))
	}
	var each enginespec.Spec
	if f.Each != "" {
		e, err := enginespec.Parse(f.Each, enginespec.Each)
		if err != nil {
			return nil, web.Bad("time control and settings: %v", err)
		}
		each = e
	}
	lim, err := enginespec.LimitsOf(each.Limits)
	if err != nil {
		return nil, web.Bad("time control %s: %v", apierr.Q(f.Each), err)
	}
	tc, err := matchspec.LimitsToProto(lim)
	if err != nil {
		return nil, web.Bad("time control %s: give one of tc=10+0.1, nodes=N, depth=D or movetime=MS", apierr.Q(f.Each))
	}
	if err := matchspec.CheckPlayable(lim); err != nil {
		return nil, web.Bad("time control %s: %v", apierr.Q(f.Each), err)
	}
	var engines [2]*arbiterv1.EngineSpec
	for i, e := range f.engines() {
		if engines[i], err = web.EngineSpec(e, each); err != nil {
			return nil, err
		}
	}
	plies, err := web.ParseInt("PGN plies", f.Plies, 0, 1000)
	if err != nil {
		return nil, err
	}
	order := f.BookOrder
	if order == "" {
		order = "sequential"
	}
	if order != "sequential" && order != "random" {
		return nil, web.Bad("book order %s: want sequential or random", apierr.Q(order))
	}
	seed, err := web.ParseInt("seed", f.Seed, 0, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	if seed == 0 {
		seed = 1
	}
	games, err := web.ParseInt("games", f.Games, 0, testview.MaxGames)
	if err != nil {
		return nil, err
	}
	batch, err := web.ParseInt("batch pairs", f.BatchPairs, 0, testview.MaxBatchPairs)
	if err != nil {
		return nil, err
	}
	prio, share, err := web.ParseShare(f.Priority, f.Share)
	if err != nil {
		return nil, err
	}
	ref, err := web.ParseInt("reference nps", f.RefNPS, 0, 1e12)
	if err != nil {
		return nil, err
	}
	if len(f.Event) > 200 {
		return nil, web.Bad("event %s: at most 200 bytes", apierr.Q(f.Event))
	}
	tags, err := testview.CheckTags(strings.FieldsFunc(f.Tags, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }))
	if err != nil {
		return nil, err
	}
	if err := testview.CheckNotes(f.Notes); err != nil {
		return nil, err
	}
	spec := &arbiterv1.MatchSpec{EngineA: engines[0], EngineB: engines[1], TimeControl: tc, BookOrder: order, Seed: uint64(seed),
		Games: uint64(games), Priority: prio, Throughput: share, BatchPairs: uint32(batch), ReferenceNps: uint64(ref), Event: f.Event,
		HangTimeout: durationpb.New(defaultHangTimeout), Tags: tags, Notes: f.Notes}
	if f.Kind == "sprt" {
		if spec.Sprt, err = sprtParams(f); err != nil {
			return nil, err
		}
	} else if games == 0 {
		return nil, web.Bad("games: a match needs a number of games (even)")
	}
	book, name, err := kit.LoadBook(f.Book, int(plies))
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
	elo0, err := web.ParseFloat("elo0", f.Elo0, -1000, 1000)
	if err != nil {
		return nil, err
	}
	elo1, err := web.ParseFloat("elo1", f.Elo1, -1000, 1000)
	if err != nil {
		return nil, err
	}
	alpha, err := web.ParseFloat("alpha", f.Alpha, 0, 0.5)
	if err != nil {
		return nil, err
	}
	beta, err := web.ParseFloat("beta", f.Beta, 0, 0.5)
	if err != nil {
		return nil, err
	}
	model, err := sprt.ParseModel(f.Model)
	if err != nil {
		return nil, web.Bad("SPRT model: %v", err)
	}
	p := sprt.Params{Elo0: elo0, Elo1: elo1, Alpha: alpha, Beta: beta, Model: model}
	if p.Alpha == 0 {
		p.Alpha = 0.05
	}
	if p.Beta == 0 {
		p.Beta = 0.05
	}
	if err := p.Validate(); err != nil {
		return nil, web.Bad("SPRT: %v", err)
	}
	return &arbiterv1.SprtParams{Elo0: p.Elo0, Elo1: p.Elo1, Alpha: p.Alpha, Beta: p.Beta, Model: string(p.Model)}, nil
}

// submitTest creates the test the form describes, storing its uploaded
// files and fetching its git sources first; a refused form is shown
// again, as typed, with the problem beside its field.
func submitTest(a *web.ActionRequest) error {
	kit := a.Form()
	f := readTestForm(a)
	spec, err := formSpec(kit, f)
	es := f.engines()
	if err == nil {
		err = kit.StoreUploads(es[:], []*arbiterv1.EngineSpec{spec.EngineA, spec.EngineB})
	}
	if err == nil {
		err = kit.ImportEngines(es[:], []*arbiterv1.EngineSpec{spec.EngineA, spec.EngineB})
	}
	if err == nil {
		if err = a.Submit(testview.Kind, spec, "test", "/tests/"); err == nil {
			return nil
		}
	}
	return a.FormError(formName, page(kit, f), err)
}

// previewTest shows the form again, as typed, with the diff from engine
// B's commit to engine A's when both are refs of one repository: what
// the test's page will show, before the test exists.
func previewTest(a *web.ActionRequest) error {
	kit := a.Form()
	f := readTestForm(a)
	d, err := kit.PreviewDiff(f.engines())
	if err != nil {
		return a.FormError(formName, page(kit, f), err)
	}
	p := page(kit, f)
	p.Preview = d
	return a.FormAgain(formName, "diff preview", p)
}
