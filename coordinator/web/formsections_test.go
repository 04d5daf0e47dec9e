package web_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/arbiter-chess/arbiter/coordinator/web"
)

// TestFormSectionRegistration: a form without a name, a template, a noun
// or Blank, and a second form of a name the kinds registered (the test
// kind's, from kinds_ext_test.go), are refused at registration, naming
// the form. (A complete form of a new name is not registered here: it
// would show on the submit page of the package's other tests.)
func TestFormSectionRegistration(t *testing.T) {
	tmpl := fstest.MapFS{"templates/x.html": {Data: []byte(`{{define "form"}}<form></form>{{end}}`)}}
	blank := func(*web.FormRequest) any { return nil }
	for _, c := range []struct {
		what string
		sec  web.FormSection
		want string
	}{
		{"no name", web.FormSection{Templates: tmpl, Noun: "x", Blank: blank}, `form section ""`},
		{"no template", web.FormSection{Name: "x", Noun: "x", Blank: blank}, `form section "x"`},
		{"no noun", web.FormSection{Name: "x", Templates: tmpl, Blank: blank}, `form section "x"`},
		{"no Blank", web.FormSection{Name: "x", Templates: tmpl, Noun: "x"}, `form section "x"`},
		{"a second testform", web.FormSection{Name: "testform", Templates: tmpl, Noun: "x", Blank: blank}, "testform"},
	} {
		got := func() (msg string) {
			defer func() {
				if p := recover(); p != nil {
					msg = strings.TrimSpace(strings.ReplaceAll(fmtAny(p), "\n", " "))
				}
			}()
			web.RegisterFormSection(c.sec)
			return ""
		}()
		if got == "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: panic %q, want one naming %s", c.what, got, c.want)
		}
	}
}

func fmtAny(p any) string {
	if err, ok := p.(error); ok {
		return err.Error()
	}
	if s, ok := p.(string); ok {
		return s
	}
	return "?"
}
