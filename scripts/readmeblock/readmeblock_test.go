package readmeblock

import (
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	doc := "intro\n<!-- begin figs (make readme-figures writes this) -->\nold 1\nold 2\n<!-- end figs -->\nafter\n"
	got, err := Replace([]byte(doc), "figs", "new")
	if err != nil {
		t.Fatal(err)
	}
	want := "intro\n<!-- begin figs (make readme-figures writes this) -->\nnew\n<!-- end figs -->\nafter\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{
		"no markers\n",
		"<!-- begin figs x -->\nno end\n",
		"<!-- begin figs x -->\n<!-- end figs -->\n<!-- begin figs x -->\n<!-- end figs -->\n",
	} {
		if _, err := Replace([]byte(bad), "figs", "new"); err == nil || !strings.Contains(err.Error(), "figs") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
