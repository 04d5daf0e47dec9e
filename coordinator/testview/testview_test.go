package testview

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/coordinator/core"
)

// fakeTests answers Tests (its methods are never called) under a kind.
type fakeTests struct {
	Tests
	kind string
}

func (f fakeTests) Kind() string { return f.kind }

// notTests is a workload that is not the test kind's.
type notTests struct {
	core.Workload
}

func (notTests) Kind() string { return Kind }

// TestOf: the test workload is found among others by its kind and its
// interface; a workload of another kind that answers Tests (a control) and
// one of the kind that does not are not taken for it.
func TestOf(t *testing.T) {
	tests := fakeTests{kind: Kind}
	other := fakeTests{kind: "spsa"}
	if got := Of([]core.Workload{other, notTests{}, tests}); got != tests {
		t.Fatalf("Of = %v, want the test kind's workload", got)
	}
	if got := Of([]core.Workload{other, notTests{}}); got != nil {
		t.Fatalf("Of without the test kind = %v, want nil", got)
	}
}

// TestChecks: tags are lower-cased and deduplicated; a bad tag, too many
// tags, a group name and notes with a control character are refused with
// an error naming the input.
func TestChecks(t *testing.T) {
	got, err := CheckTags([]string{"NNUE", "nnue", "lmr-2"})
	if err != nil || strings.Join(got, ",") != "nnue,lmr-2" {
		t.Fatalf("CheckTags = %q, %v", got, err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := CheckTags([]string{"ok", "bad tag"}); return err }(), `tag "bad tag"`},
		{func() error { _, err := CheckTags(make([]string, MaxTags+1)); return err }(), "tags: 9 given, at most 8"},
		{func() error { _, err := CheckWord("group", ""); return err }(), `group "": want 1 to 32`},
		{CheckNotes("line\x07"), "notes"},
		{CheckNotes(strings.Repeat("n", MaxNotes+1)), "at most 2000 bytes"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
	if err := CheckNotes("two\nlines\tand a tab"); err != nil {
		t.Errorf("CheckNotes of plain notes: %v", err)
	}
}
