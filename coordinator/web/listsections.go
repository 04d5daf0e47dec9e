package web

// The list's sections a kind registers: the table of its jobs on the list
// of work (/ and /users/{name}), before the jobs of kinds with no table,
// in the order of ListSection.Order (tests 10, perft jobs 20, SPSA tunes
// 30). Each is rendered from the kind's own template (parsed with the
// layout's parts and functions at New, like a page's), given the jobs of
// its family on the list's page; it is shown when it has jobs, when the
// filter names a kind of its family (the empty table then says so), or
// always (ShowEmpty: the tests' and perft's tables, shown empty as they
// were when the list held them). This package names no family's table.
//
// Invariant: a section's Name is unique (RegisterListSection panics on a
// second), and so is its family: a job is listed in one table.

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/registry"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// ListSection is a kind's table on the list of work.
type ListSection struct {
	// Name is the template's name: Templates holds templates/Name.html,
	// which defines "section" (the table with its heading), reading a
	// ListSectionData.
	Name      string
	Templates fs.FS
	// Family is the family of the jobs it lists.
	Family jobkind.Family
	// Order places it among the sections (then its name).
	Order int
	// ShowEmpty: the section is shown with no jobs too, whatever the
	// filter names (but on the list of verify sessions alone).
	ShowEmpty bool
}

// ListSectionData is what a section's template reads.
type ListSectionData struct {
	Jobs []*arbiterv1.Job
	// Any: the list's filter keeps less than everything.
	Any bool
	Now time.Time
}

var listSections = registry.New[ListSection]("web: list section")

// RegisterListSection adds a section of the list; a second section of
// one name or one family panics, and so does one without a name, a
// family or a template.
func RegisterListSection(sec ListSection) {
	if sec.Name == "" || sec.Family == "" || sec.Templates == nil {
		panic(fmt.Sprintf("web: list section %q registered without a name, a family or a template", sec.Name))
	}
	for _, o := range listSections.All() {
		if o.Family == sec.Family {
			panic(fmt.Sprintf("web: list sections %q and %q both list the family %q", o.Name, sec.Name, sec.Family))
		}
	}
	listSections.Add(sec.Name, sec)
}

// sortedSections are the registered sections in their order.
func sortedSections() []ListSection {
	return inOrder(listSections.All(), func(sec ListSection) (int, string) { return sec.Order, sec.Name })
}

// inOrder sorts a kind's registered parts (list sections, forms) by
// their order, then their name.
func inOrder[T any](parts []T, key func(T) (int, string)) []T {
	slices.SortStableFunc(parts, func(a, b T) int {
		ao, an := key(a)
		bo, bn := key(b)
		if ao != bo {
			return ao - bo
		}
		return strings.Compare(an, bn)
	})
	return parts
}

// parseSections parses every section's template with the layout's
// parts (base), by name.
func parseSections(base *template.Template) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, sec := range listSections.All() {
		t, err := parseOn(base, sec.Templates, sec.Name)
		if err != nil {
			return nil, fmt.Errorf("web: list section %s: %w", sec.Name, err)
		}
		out[sec.Name] = t
	}
	return out, nil
}

// parseOn parses templates/name.html of from on a copy of the layout's
// parts (base).
func parseOn(base *template.Template, from fs.FS, name string) (*template.Template, error) {
	return template.Must(base.Clone()).ParseFS(from, "templates/"+name+".html")
}

// sectionFamily reports whether a section lists the jobs of family f.
func sectionFamily(f jobkind.Family) bool {
	for _, sec := range listSections.All() {
		if sec.Family == f {
			return true
		}
	}
	return false
}

// renderSections renders the sections of the list's page: each
// registered section with the jobs of its family in byFamily, shown
// when it has some, when the filter names a kind of its family, or
// always when it shows empty.
func (s *Server) renderSections(byFamily map[jobkind.Family][]*arbiterv1.Job, filterKind string, anyFilter bool, now time.Time) ([]template.HTML, error) {
	var out []template.HTML
	named := jobkind.Lookup(filterKind).Family
	for _, sec := range sortedSections() {
		jobs := byFamily[sec.Family]
		if len(jobs) == 0 && !sec.ShowEmpty && (filterKind == "" || named != sec.Family) {
			continue
		}
		var buf bytes.Buffer
		if err := s.sections[sec.Name].ExecuteTemplate(&buf, "section", &ListSectionData{Jobs: jobs, Any: anyFilter, Now: now}); err != nil {
			return nil, fmt.Errorf("web: list section %s: %w", sec.Name, err)
		}
		out = append(out, template.HTML(buf.String()))
	}
	return out, nil
}
