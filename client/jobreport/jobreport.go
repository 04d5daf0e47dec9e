// Package jobreport is what the arbiter command says about jobs on a
// coordinator: the registry of the kinds' reports (a family's list table,
// detail, JSON, and Wait, which follows one job to its end and prints it),
// job lists and details, the JSON of jobs, a test followed with a line per
// batch and its fastchess-style report, and a test's games downloaded.
// Errors carry the command's exit status (client/cliexit).
package jobreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// StateName is a job state as people read it: "running", "done", ...
func StateName(s arbiterv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}

// WatchPolicy follows a job until it ends however long the coordinator is
// away (it keeps the job; Ctrl-C stops waiting), and says so on out once
// per outage.
func WatchPolicy(c *clusterclient.Client, out io.Writer) clusterclient.Policy {
	return clusterclient.Persistent.WithOnRetry(func(attempt int, err error, _ time.Duration) {
		if attempt == 0 {
			fmt.Fprintf(out, "\n%s; reconnecting...\n", c.Away(err))
		}
	})
}
