package jobreport

import (
	"fmt"
	"io"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// BlockedNotice tells someone waiting on a job why it cannot progress
// (the coordinator's reason, e.g. verification waiting for a worker of a
// second identity), once when it stops and once when it goes on, instead
// of a progress line that silently stands still.
type BlockedNotice struct {
	w    io.Writer
	last string
}

// NewBlockedNotice tells on w.
func NewBlockedNotice(w io.Writer) *BlockedNotice { return &BlockedNotice{w: w} }

// Update is called with each state of the job as it is watched.
func (b *BlockedNotice) Update(j *arbiterv1.Job) {
	reason := j.GetProgress().GetBlocked()
	if reason == b.last {
		return
	}
	switch {
	case reason != "":
		fmt.Fprintf(b.w, "\njob %s cannot progress: %s\n", j.GetJobId(), reason)
	case j.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING:
		fmt.Fprintf(b.w, "\njob %s progresses again\n", j.GetJobId())
	}
	b.last = reason
}
