package web

// The submit page's forms a kind registers: GET /submit shows one form
// per registered FormSection (the test kind's SPRT or match form, perft's
// form), in the order of FormSection.Order, each rendered from the kind's
// own template (parsed with the layout's parts and functions at New, like
// a page's). The form's POST is the kind's own route (RegisterRoute,
// routes.go), so admission's one table gives it its role, CSRF check and
// body limit, decided from the headers before the body is read, as for
// every route: a kind cannot skip them. A route that refuses the form
// shows the page again through ActionRequest.FormError (its form as
// typed, the problem beside its field, the other forms as first shown).
//
// What the forms share stays here, as a kit (FormRequest, formkit.go):
// the coordinator's opening books, engines from git repositories and
// uploaded files (formsources.go, formuploads.go), the diff preview.
//
// Invariant: a section's Name is unique (RegisterFormSection panics on a
// second); this package names no kind's form.

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/arbiter-chess/arbiter/base/registry"
	"go.uber.org/zap"
)

// FormSection is a kind's form on the submit page.
type FormSection struct {
	// Name is the template's name: Templates holds templates/Name.html,
	// which defines "form" (the form, among the page's forms) and may
	// define "before" (shown above the forms: the test form's shortcut),
	// each reading a FormSectionData.
	Name      string
	Templates fs.FS
	// Order places it among the forms (then its name).
	Order int
	// Noun is what the form submits, as the page's problem line names
	// it ("The test was not submitted:").
	Noun string
	// Blank is the form's data as shown beside another form's problem.
	Blank func(f *FormRequest) any
	// Fill is the form's data on GET /submit (nil: Blank's).
	Fill func(f *FormRequest) any
}

// FormSectionData is what a form's templates read.
type FormSectionData struct {
	// Form is the kind's data (Blank's, Fill's, or the form as typed).
	Form any
	// CSRF is the form token the form sends.
	CSRF string
	// CanSubmit: the viewer may submit (else the form shows disabled).
	CanSubmit bool
	// Error and Field are the problem of this form and the field it is
	// about ("" for none, or for the form as a whole).
	Error, Field string
}

var formSections = registry.New[FormSection]("web: form section")

// RegisterFormSection adds a form to the submit page; a second of one
// name panics, and so does one without a name, a template or Blank.
func RegisterFormSection(sec FormSection) {
	if sec.Name == "" || sec.Templates == nil || sec.Blank == nil || sec.Noun == "" {
		panic(fmt.Sprintf("web: form section %q registered without a name, a template, a noun or Blank", sec.Name))
	}
	formSections.Add(sec.Name, sec)
}

// sortedForms are the registered forms in their order.
func sortedForms() []FormSection {
	return inOrder(formSections.All(), func(sec FormSection) (int, string) { return sec.Order, sec.Name })
}

// parseForms parses every form's template with the layout's parts (base),
// by name.
func parseForms(base *template.Template) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, sec := range formSections.All() {
		t, err := parseOn(base, sec.Templates, sec.Name)
		if err != nil {
			return nil, fmt.Errorf("web: form section %s: %w", sec.Name, err)
		}
		if t.Lookup("form") == nil {
			return nil, fmt.Errorf("web: form section %s: templates/%s.html defines no \"form\"", sec.Name, sec.Name)
		}
		out[sec.Name] = t
	}
	return out, nil
}

// submitData is what the submit page reads: the problem, and the forms
// rendered.
type submitData struct {
	Error string
	Which string // the noun of the form the problem is about
	// Before and Forms are the forms' parts, rendered in their order.
	Before, Forms []template.HTML
}

// shown is one form's data on the submit page, and its problem.
type shown struct {
	name         string
	form         any
	error, field string
}

// submitPage is GET /submit: every form as Fill makes it.
func (s *Server) submitPage(r *http.Request, v *view) error {
	v.Title, v.Nav, v.tmpl = "Submit", "submit", "submit"
	f := &FormRequest{R: r, s: s, vw: v.Viewer}
	d, err := s.submitForms(v, shown{}, func(sec FormSection) any {
		if sec.Fill != nil {
			return sec.Fill(f)
		}
		return sec.Blank(f)
	})
	v.Page = d
	return err
}

// submitForms renders the forms: the one named by one with its data and
// problem, the others from data.
func (s *Server) submitForms(v *view, one shown, data func(FormSection) any) (*submitData, error) {
	d := &submitData{}
	for _, sec := range sortedForms() {
		fd := &FormSectionData{CSRF: v.CSRF, CanSubmit: v.Viewer.CanSubmit()}
		if sec.Name == one.name {
			fd.Form, fd.Error, fd.Field = one.form, one.error, one.field
			d.Error, d.Which = one.error, sec.Noun
		} else {
			fd.Form = data(sec)
		}
		t := s.forms[sec.Name]
		for _, part := range []struct {
			name string
			to   *[]template.HTML
		}{{"before", &d.Before}, {"form", &d.Forms}} {
			if t.Lookup(part.name) == nil {
				continue
			}
			var buf bytes.Buffer
			if err := t.ExecuteTemplate(&buf, part.name, fd); err != nil {
				return nil, fmt.Errorf("web: form section %s: %w", sec.Name, err)
			}
			*part.to = append(*part.to, template.HTML(buf.String()))
		}
	}
	return d, nil
}

// showForm answers with the submit page: form name as typed (data), with
// its problem (err, nil for none), the other forms blank.
func (s *Server) showForm(w http.ResponseWriter, r *http.Request, vw viewer, title string, status int, one shown) error {
	v := &view{Title: title, Nav: "submit", Viewer: vw, Now: s.cfg.Now(), status: status}
	v.CSRF = s.csrfToken(w, r)
	f := &FormRequest{R: r, s: s, vw: vw}
	d, err := s.submitForms(v, one, func(sec FormSection) any { return sec.Blank(f) })
	if err != nil {
		return err
	}
	v.Page = d
	s.render(w, v, "submit")
	return nil
}

// FormError answers a refused form of section name: the submit page
// again with the form as typed (form) and the problem beside its field
// (the status of err: 400 for bad input). An error of the server, the
// caller's credential or its rights (5xx, 401, 403) is returned, shown as
// an error page.
func (a *ActionRequest) FormError(name string, form any, err error) error {
	we := asWebError(err)
	if we.Status >= 500 || we.SignIn || we.Status == http.StatusForbidden {
		return err
	}
	return a.s.showForm(a.W, a.R, a.vw, "Submit: "+we.Title, we.Status, shown{name: name, form: form, error: we.Msg, field: formFieldOf(err)})
}

// FormAgain answers with the submit page titled "Submit: title", form
// name as typed (form) and no problem: a preview.
func (a *ActionRequest) FormAgain(name, title string, form any) error {
	return a.s.showForm(a.W, a.R, a.vw, "Submit: "+title, http.StatusOK, shown{name: name, form: form})
}

// Submit creates a job of kind from spec through the core (which checks
// the caller's role, quota and the spec again), logs "WHAT submitted on
// the web" and answers with the job's page, page+id (303).
func (a *ActionRequest) Submit(kind string, spec any, what, page string) error {
	ref, err := a.s.cfg.Core.Create(a.R.Context(), a.vw.identity(), kind, spec)
	if err != nil {
		return err
	}
	a.s.log.Info(what+" submitted on the web", zap.String("job_id", ref.ID), zap.String("identity", a.vw.Name))
	http.Redirect(a.W, a.R, page+url.PathEscape(ref.ID), http.StatusSeeOther)
	return nil
}
