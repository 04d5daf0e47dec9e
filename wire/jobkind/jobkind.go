// Package jobkind names the kinds of job a coordinator runs, as clients
// see them: the kind a job snapshot carries (Job.kind), the family of
// kinds that are shown alike, and where a job's page is. Clients (the
// CLI's status, the web pages, the JSON reports) decide how to show a job
// by Of(job), never by which of its spec fields is set.
//
// A kind registers itself once (Register) from the init of the package
// that shows it (a kind's folder under kinds/, or client/jobreport for the
// built-in families until they move there); a client that meets a kind it
// does not know shows the job generically instead of guessing. This
// package keeps no list of kinds.
package jobkind

import (
	"net/url"

	"github.com/arbiter-chess/arbiter/base/registry"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Kind names as Job.kind carries them.
const (
	Perft = "perft"
	SPRT  = "sprt"
	Match = "match"
	SPSA  = "spsa"
)

// Family groups kinds that clients show alike.
type Family string

const (
	// FamilyPerft: perft jobs (totals, divide, units).
	FamilyPerft Family = "perft"
	// FamilyTest: match and SPRT tests between two engines.
	FamilyTest Family = "test"
	// FamilyTune: SPSA tunes.
	FamilyTune Family = "tune"
	// FamilyOther: a kind this build does not know.
	FamilyOther Family = "other"
)

// Kind is what clients know of one kind of job.
type Kind struct {
	// Name as Job.kind carries it.
	Name   string
	Family Family
	// Path is the web page of the kind's jobs; a job's page is Path + id.
	Path string
	// Noun names a job of the kind in messages ("test", "perft job").
	Noun string
	// Workload is the coordinator kind that runs its jobs when it is not
	// Name: sprt and match jobs are the "test" workload's. Lists filtered
	// by that kind keep them. Register fills in Name when left empty.
	Workload string
}

var kinds = registry.New[Kind]("jobkind: kind")

// Register adds a kind. Registering a name twice keeps the last: a kind's
// package owns its entry.
func Register(k Kind) {
	if k.Workload == "" {
		k.Workload = k.Name
	}
	kinds.Set(k.Name, k)
}

// Lookup returns the kind of a name; an unknown name is of FamilyOther.
func Lookup(name string) Kind {
	if k, ok := kinds.Get(name); ok {
		return k
	}
	return Kind{Name: name, Family: FamilyOther, Noun: "job", Workload: name}
}

// Of returns the kind of a job snapshot.
func Of(j *arbiterv1.Job) Kind { return Lookup(j.GetKind()) }

// Is reports whether job j is of family f.
func Is(j *arbiterv1.Job, f Family) bool { return Of(j).Family == f }

// URL is a job's web page ("" for a kind without one).
func URL(j *arbiterv1.Job) string {
	k := Of(j)
	if k.Path == "" {
		return ""
	}
	return k.Path + url.PathEscape(j.GetJobId())
}

// Names lists the registered kind names, sorted.
func Names() []string { return kinds.Names() }

// Split groups jobs by family, keeping their order within each.
func Split(jobs []*arbiterv1.Job) map[Family][]*arbiterv1.Job {
	out := make(map[Family][]*arbiterv1.Job)
	for _, j := range jobs {
		f := Of(j).Family
		out[f] = append(out[f], j)
	}
	return out
}
