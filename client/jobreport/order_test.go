package jobreport

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// withReports runs f with only the given reports registered, in the order
// given, and puts the test binary's registrations back after.
func withReports(t *testing.T, regs []jobkind.Family, orders map[jobkind.Family]int, f func()) {
	t.Helper()
	reportsMu.Lock()
	saved := reports
	reports = map[jobkind.Family]Report{}
	reportsMu.Unlock()
	defer func() {
		reportsMu.Lock()
		reports = saved
		reportsMu.Unlock()
	}()
	for _, fam := range regs {
		header := strings.ToUpper(string(fam)) + "\tSTATE"
		RegisterReport(fam, Report{Order: orders[fam], Header: header,
			Row: func(j *arbiterv1.Job) string { return fmt.Sprintf("%s\t%s", j.GetJobId(), ListState(j)) }})
	}
	f()
}

// TestFamiliesInTheirOrder: status's tables follow Report.Order (then the
// family's name), whatever order the reports register in. The control is
// the reverse registration: a list in registration order fails it.
func TestFamiliesInTheirOrder(t *testing.T) {
	orders := map[jobkind.Family]int{"zeta": 10, "beta": 20, "alpha": 30, "gamma": 30}
	want := []jobkind.Family{"zeta", "beta", "alpha", "gamma"}
	var jobs []*arbiterv1.Job
	for _, fam := range want {
		jobkind.Register(jobkind.Kind{Name: "order-" + string(fam), Family: fam, Path: "/order/", Noun: "job"})
		jobs = append(jobs, &arbiterv1.Job{JobId: "j-" + string(fam), Kind: "order-" + string(fam)})
	}
	var lists []string
	for _, regs := range [][]jobkind.Family{
		{"zeta", "beta", "alpha", "gamma"},
		{"gamma", "alpha", "beta", "zeta"},
		{"alpha", "zeta", "gamma", "beta"},
	} {
		withReports(t, regs, orders, func() {
			if got := Families(); !reflect.DeepEqual(got, want) {
				t.Errorf("registered %v: Families() = %v, want %v", regs, got, want)
			}
			var out bytes.Buffer
			if err := PrintJobs(&out, jobs); err != nil {
				t.Fatal(err)
			}
			lists = append(lists, out.String())
		})
	}
	headers := tableHeaders(lists[0])
	if !reflect.DeepEqual(headers, []string{"ZETA", "BETA", "ALPHA", "GAMMA"}) {
		t.Errorf("tables %v:\n%s", headers, lists[0])
	}
	for _, l := range lists[1:] {
		if l != lists[0] {
			t.Errorf("the list depends on the registration order:\n%s\nthen:\n%s", lists[0], l)
		}
	}
}

// tableHeaders returns the first word of each table's header line.
func tableHeaders(list string) []string {
	var out []string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "STATE" {
			out = append(out, f[0])
		}
	}
	return out
}
