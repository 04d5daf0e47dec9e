package perft_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestPerftOnAFarm: every side the kind registers, on a real coordinator
// with two workers on loopback. `submit perft --wait --divide` (the
// command the kind registered) prints perft(4) of the start position,
// 197281 with its divide; `arbiter perft --coordinator` (the kind's
// command) prints the same; status's list and detail (the kind's report)
// show the job; its page (the kind's) shows the total, the published
// count it matches and the divide; a test's id there is refused.
func TestPerftOnAFarm(t *testing.T) {
	farm := farmtest.Start(t, 2)
	client := []string{"--coordinator", farm.Addr(), "--token", farm.Token()}
	out := run(t, registered(t, clicmd.SubmitCommands(), "perft"), append(client, "--depth", "4", "--wait", "--divide")...)
	for _, want := range []string{"a2a3: 8457\n", "g1f3: 9748\n", "Nodes: 197281\n", "Units: "} {
		if !strings.Contains(out, want) {
			t.Errorf("submit perft --wait --divide lacks %q:\n%s", want, out)
		}
	}
	if local := run(t, registered(t, clicmd.Commands(), "perft"), append(client, "--depth", "3")...); !strings.Contains(local, "Nodes: 8902\n") {
		t.Errorf("perft --coordinator --depth 3:\n%s", local)
	}

	c := farm.Client(t)
	list, err := c.Jobs.ListJobs(t.Context(), &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*arbiterv1.Job
	var four *arbiterv1.Job
	for _, j := range list.GetJobs() {
		jobs = append(jobs, j)
		if j.GetPerft().GetDepth() == 4 {
			four = j
		}
	}
	if four == nil {
		t.Fatalf("no perft(4) job among %d", len(jobs))
	}
	id := four.GetJobId()
	got, err := c.Jobs.GetJob(t.Context(), &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	four = got.GetJob()
	var text bytes.Buffer
	if err := jobreport.PrintJobs(&text, jobs); err != nil || !strings.Contains(text.String(), "PERFT  ") || !strings.Contains(text.String(), id) {
		t.Errorf("status's list (%v):\n%s", err, text.String())
	}
	text.Reset()
	if err := jobreport.PrintJob(&text, four); err != nil || !strings.Contains(text.String(), "Nodes:      197281\n") ||
		!strings.Contains(text.String(), "  a2a3: 8457\n") {
		t.Errorf("status %s (%v):\n%s", id, err, text.String())
	}
	if o := jobreport.NewJobJSON(four); o.Perft == nil || o.Perft.Depth != 4 {
		t.Errorf("status %s --json: the typed perft object is %+v", id, o.Perft)
	}

	status, body := farm.Do(t, "GET", "/perft/"+id, nil)
	if status != 200 {
		t.Fatalf("/perft/%s: %d\n%s", id, status, body)
	}
	for _, want := range []string{"Perft " + id + ": depth 4", `id="published-check">the total matches it`, `data-move="a2a3"`,
		`data-value="8457"`, "20 of 20 root moves complete", `action="/jobs/` + id + `/follow`} {
		if !strings.Contains(body, want) {
			t.Errorf("/perft/%s lacks %q", id, want)
		}
	}
	if status, body := farm.Do(t, "GET", "/perft/pnosuchjob00", nil); status != 404 || !strings.Contains(body, "unknown job") {
		t.Errorf("/perft/ of no job: %d", status)
	}
}

// registered is the command of this name among cmds (the kind's
// registrations).
func registered(t *testing.T, cmds []*cobra.Command, name string) *cobra.Command {
	t.Helper()
	for _, c := range cmds {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no command %q registered", name)
	return nil
}

// run runs cmd with args and returns what it printed on stdout.
func run(t *testing.T, cmd *cobra.Command, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%s %v: %v\n%s", cmd.Name(), args, err, errOut.String())
	}
	return out.String()
}
