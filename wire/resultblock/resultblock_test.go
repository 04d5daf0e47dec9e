package resultblock

import (
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// A kind's block comes from its registration (tests register theirs from
// kinds/test); a job of a family nobody registered, the control, has the
// line naming it and its state, and both end with the link.
func TestBlockFromTheRegistry(t *testing.T) {
	jobkind.Register(jobkind.Kind{Name: "blockfake", Family: "blockfake", Noun: "fake job"})
	Register("blockfake", func(j *arbiterv1.Job, style Style) []string { return []string{"FAKE | " + string(style)} })
	j := &arbiterv1.Job{JobId: "f1", Kind: "blockfake", State: arbiterv1.JobState_JOB_STATE_RUNNING}
	if got, want := Of(j, Fishtest, "/f/f1"), "FAKE | fishtest\n/f/f1\n"; got != want {
		t.Errorf("registered block = %q, want %q", got, want)
	}
	other := &arbiterv1.Job{JobId: "o1", Kind: "unregistered", State: arbiterv1.JobState_JOB_STATE_DONE}
	if got, want := Of(other, OpenBench, "/o/o1"), "job o1: done\n/o/o1\n"; got != want {
		t.Errorf("unregistered block = %q, want %q", got, want)
	}
}
