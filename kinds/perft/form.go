package perft

import (
	"embed"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The perft form of the submit page (/submit): its section
// (web.RegisterFormSection, with its own templates/perftform.html, after
// the test form) and its route, POST /submit/perft, through
// web.RegisterRoute, so admission's table decides its role, CSRF check
// and body limit (a small form) from the headers before the body is
// read. Each field is checked here with an error that names it, and the
// spec is checked again by the workload.

//go:embed templates/perftform.html
var formTemplates embed.FS

// formName is the section's name.
const formName = "perftform"

func init() {
	web.RegisterFormSection(web.FormSection{Name: formName, Templates: formTemplates, Order: 20, Noun: "perft",
		Blank: func(*web.FormRequest) any { return defaultForm() }})
	web.RegisterRoute(web.Route{Pattern: "POST /submit/perft", Serve: submitPerft})
}

// perftForm holds the form's fields as typed, for showing them again.
type perftForm struct {
	FEN, Depth, Verify, SplitPly string
	Chess960                     bool
	Priority, Share              string
}

func defaultForm() perftForm {
	return perftForm{FEN: engine.StartFEN, Depth: "6", Verify: "0", Priority: "0", Share: "1"}
}

// submitPerft creates the perft job the form describes; a refused form
// is shown again, as typed, with the problem.
func submitPerft(a *web.ActionRequest) error {
	v := func(k string) string { return strings.TrimSpace(a.R.PostFormValue(k)) }
	p := perftForm{FEN: v("fen"), Depth: v("depth"), Verify: v("verify"), SplitPly: v("split_ply"),
		Chess960: a.R.PostFormValue("chess960") != "", Priority: v("priority"), Share: v("throughput")}
	spec, err := perftSpec(p)
	if err == nil {
		if err = a.Submit(jobkind.Perft, spec, "perft job", "/perft/"); err == nil {
			return nil
		}
	}
	return a.FormError(formName, p, err)
}

// perftSpec builds the job's spec from the form.
func perftSpec(p perftForm) (*arbiterv1.PerftSpec, error) {
	if p.FEN == "" {
		p.FEN = engine.StartFEN
	}
	if len(p.FEN) > 256 {
		return nil, web.Bad("FEN %s: longer than 256 bytes", apierr.Q(p.FEN))
	}
	if _, err := engine.ParseFEN(p.FEN); err != nil {
		return nil, web.Bad("invalid FEN %s: %v", apierr.Q(p.FEN), err)
	}
	if p.Depth == "" {
		return nil, web.Bad("depth: missing")
	}
	depth, err := web.ParseInt("depth", p.Depth, 1, engine.MaxPerftDepth)
	if err != nil {
		return nil, err
	}
	verify, err := web.ParseFloat("verify fraction", p.Verify, 0, 1)
	if err != nil {
		return nil, err
	}
	split, err := web.ParseInt("split ply", p.SplitPly, 0, depth)
	if err != nil {
		return nil, err
	}
	prio, share, err := web.ParseShare(p.Priority, p.Share)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.PerftSpec{Fen: p.FEN, Depth: uint32(depth), VerifyFraction: verify, SplitPly: uint32(split), Chess960: p.Chess960,
		Priority: prio, Throughput: share}, nil
}
