// Package workload is where a kind of job plugs into the coordinator. A
// kind registers itself once, from its package's init, with its name, the
// spec message clients submit it with, and how to build its core.Workload
// from Deps; the coordinator builds every registered kind (the built-in
// perft, test, spsa and verify kinds as much as datagen), and one import
// (in coordinator/kinds.go) is all it takes to add one, as Prometheus's
// discovery mechanisms are added.
//
// What the outer layers need of a kind is asked through small interfaces
// the workload may implement (Flusher, Quarantiner, Retainer, Needer,
// ArtifactUser), so the coordinator loops over its workloads instead of
// naming them. Clients find a kind's page and report through
// wire/jobkind and client/jobreport; its tables through
// store.RegisterSchema; what a worker must offer through
// base/capability.
package workload

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Deps is what the coordinator builds a kind's workload with.
type Deps struct {
	Store      *store.Store
	Logger     *zap.Logger
	Now        func() time.Time
	Registerer prometheus.Registerer
	// DataDir is the coordinator's data directory; a kind keeps its files
	// in a folder of its own name below it.
	DataDir string
	// ResolveArtifact completes an uploaded engine's artifact from the
	// coordinator's store when a job is submitted (which names the field).
	ResolveArtifact func(which string, e *arbiterv1.EngineSpec) error
	// Settings are the kind's own settings from the command's flags, a
	// value of the type its package defines (read it with SettingsOf); nil:
	// the kind's defaults.
	Settings any
	// Games counts the games of every workload that plays games
	// (arbiter_games_total); the coordinator registers it once.
	Games *gamepair.GameCounter
	// Activity is the workers' recent games and incidents over every
	// workload that plays games (the /workers page).
	Activity *gamepair.Activity
	// Trust is every worker identity's trust, shared by the workloads that
	// play games (gamepair/trust.go).
	Trust *gamepair.Trust
	// ReferenceNPS is the bench speed a game's clock is meant for when its
	// job names none: the tests' (gamepair.Settings.ReferenceNPS; 0:
	// gamepair.DefaultReferenceNPS), for the other kinds that play games.
	ReferenceNPS uint64
	// UnitDuration is the compute time one unit should take
	// (--unit-duration; 0: the kind's default), and RecheckDefault the
	// share of units computed again by a second identity for jobs that
	// set none (--recheck-default), for the kinds that split a job into
	// units of their own size (perft).
	UnitDuration   time.Duration
	RecheckDefault float64
	// Approvals is the coordinator's approval rule (nil: approvals are
	// off). The core holds the jobs it creates; a kind whose sessions do
	// not go through core.Create (verify sessions) asks it itself before
	// it starts one, under the same rule (Kind.Runs).
	Approvals core.Approvals
	// JobExists reports whether any workload has a job of this id.
	JobExists func(jobID string) bool
	// Workload returns the workload of a registered kind, for the kinds
	// that ask another (a test that verifies a tune asks whether the tune
	// exists). Call it once the coordinator serves, never from New: the
	// kinds are built in turn.
	Workload func(kind string) (core.Workload, bool)
}

// SettingsOf returns d's Settings as a kind's settings type: the zero
// value when none were given, an error when they are of another type (the
// coordinator handed one kind's settings to another).
func SettingsOf[T any](d Deps) (T, error) {
	var zero T
	if d.Settings == nil {
		return zero, nil
	}
	s, ok := d.Settings.(T)
	if !ok {
		return zero, fmt.Errorf("settings of type %T, want %T", d.Settings, zero)
	}
	return s, nil
}

// WithSettings is a Kind's New for a kind whose settings are a C: build
// gets them from Deps.Settings (the zero C when none were given) with the
// rest of Deps.
func WithSettings[C any, W core.Workload](build func(C, Deps) W) func(Deps) (core.Workload, error) {
	return func(d Deps) (core.Workload, error) {
		cfg, err := SettingsOf[C](d)
		if err != nil {
			return nil, err
		}
		return build(cfg, d), nil
	}
}

// Kind is a kind of job that plugs into the coordinator.
type Kind struct {
	// Name is the job kind (Job.kind, core.Create's kind).
	Name string
	// Spec returns a new, empty spec message: JobService.SubmitJob unpacks
	// the request's spec into it, and refuses a spec of another type. Nil:
	// the kind's jobs are not submitted (verify sessions are opened
	// through their own service).
	Spec func() proto.Message
	// New builds the kind's workload.
	New func(Deps) (core.Workload, error)
	// Order places the kind where the core asks its workloads in turn
	// (which finds a unit's job, which wins a tie between equally
	// deserving jobs): ascending, then by name.
	Order int
	// Flags, when set, adds the kind's own flags to the coordinator
	// command and returns what reads them once they are parsed: the
	// kind's settings (Deps.Settings), or an error that names the flag.
	// The command's other flags know nothing of the kind.
	Flags func(fs *pflag.FlagSet) (settings func() (any, error))
	// Runs says whose programs the kind's units start on a worker. It is
	// the one place the approval rule reads (RunsSubmittedCode): every
	// kind states it, and Register refuses a kind that does not, so a new
	// kind cannot slip past approval by being left off a list.
	Runs Programs
	// Dashboard, when set, is the kind's row of the cluster overview
	// dashboard (scripts/dashgen builds every registered kind's): panels
	// over the metrics its workload exports.
	Dashboard *DashboardRow
	// Example is a small job of the kind whose engine is the engine spec
	// `engine` (the embedded engine or a build of it: a tune's example
	// tunes one of its options): the arguments of `arbiter submit`, the
	// first being the kind's submit word. It may write the files its
	// arguments name (a book, a suite) into dir. Tests that must run a
	// job of every kind read it (approvals: TestApprovalHoldsEveryUploadingKind),
	// so Register refuses a submitted kind that runs submitted programs
	// without one.
	Example func(engine, dir string) []string
}

// DashboardRow is a kind's row of the overview dashboard.
type DashboardRow struct {
	Title  string
	Panels []DashboardPanel
}

// DashboardPanel is one panel of a kind's dashboard row: a stat of one
// query's last value, or a line chart of its queries. Width and Height
// are in the dashboard's grid units (24 to a row).
type DashboardPanel struct {
	Title, Description string
	// Unit is Grafana's unit ("none", "short", "percentunit", ...).
	Unit          string
	Stat          bool
	Queries       []DashboardQuery
	Width, Height int
}

// DashboardQuery is a PromQL expression and its legend; write a rate's
// window as [$__rate_interval].
type DashboardQuery struct{ Expr, Legend string }

// Programs is whose programs a kind's units start on a worker.
type Programs int

const (
	// programsUnstated is the zero value: a registration that forgot to
	// say (Register panics).
	programsUnstated Programs = iota
	// OperatorPrograms: only programs the worker's operator installed run,
	// as the operator set them up (the embedded move generator of perft);
	// nothing a submitter sends reaches a program, so no job of the kind
	// waits for an approver.
	OperatorPrograms
	// SubmittedPrograms: a job may name a program its submitter sent (an
	// uploaded binary, a source tree or git ref that workers build), or
	// hand its own arguments and options to a program of the operator's
	// (verify sessions): with approvals on, the jobs of accounts with role
	// user wait for an approver before a worker leases a unit of them, and
	// a kind whose sessions are interactive refuses them instead.
	SubmittedPrograms
)

var (
	mu    sync.Mutex
	kinds = map[string]Kind{}
)

// Register adds a kind; a second registration of a name panics (two
// packages claiming one kind is a build mistake).
func Register(k Kind) {
	if k.Runs != OperatorPrograms && k.Runs != SubmittedPrograms {
		panic("workload: kind " + k.Name + " registered without Runs (OperatorPrograms or SubmittedPrograms)")
	}
	if k.Runs == SubmittedPrograms && k.Spec != nil && k.Example == nil {
		panic("workload: kind " + k.Name + " runs submitted programs and has no Example (the approval test submits one of every such kind)")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		panic("workload: kind " + k.Name + " registered twice")
	}
	kinds[k.Name] = k
}

// Kinds returns the registered kinds by Order, then name.
func Kinds() []Kind {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Lookup returns a registered kind.
func Lookup(name string) (Kind, bool) {
	mu.Lock()
	defer mu.Unlock()
	k, ok := kinds[name]
	return k, ok
}

// RunsSubmittedCode reports whether jobs of kind may start a program its
// submitter sent (Kind.Runs): the approval rule's question. A kind not
// registered here answers true: an unknown kind is held, never waved
// through.
func RunsSubmittedCode(kind string) bool {
	k, ok := Lookup(kind)
	return !ok || k.Runs == SubmittedPrograms
}

// Flusher writes what a workload queued (events) before the coordinator
// stops.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Quarantiner reports the stored records its last Load skipped, for the
// coordinator to quarantine.
type Quarantiner interface {
	Quarantined() []store.Quarantined
}

// Retainer deletes the bulky data (games, shards) of jobs finished before
// cutoff, keeping their counts; it returns the jobs it expired.
type Retainer interface {
	Expire(ctx context.Context, cutoff, now time.Time) ([]string, error)
}

// Servicer is a workload with a gRPC service of its own (datagen's
// DatagenService). caller resolves the identity of a call; the service
// checks the role itself too. It returns the names of the services it
// registered, for health, and the rule of each of their methods.
type Servicer interface {
	RegisterGRPC(reg grpc.ServiceRegistrar, caller func(context.Context) identity.Identity) (services []string, methods []Method)
}

// Method is how the coordinator admits a call of one method of a kind's
// service before it reads the request: the role a credential needs
// (identity.Client admits admins too, identity.Worker admins and
// workers), and the largest request it takes. A method a kind does not
// describe admits any credential and the server's largest request.
type Method struct {
	FullName string
	Role     identity.Role
	MaxBytes int
}

// Needer says what a worker must offer to run a job's units (core.Need;
// ok false: not a job of the workload). Status shows a running job that no
// live worker can run as blocked, with the reason; grpcapi.StallWatch
// fails one that asks it (Need.FailUnstarted) once none could start it
// for the start timeout.
type Needer interface {
	Needs(jobID string) (need core.Need, ok bool)
}

// LiarPurger takes an admin's verdict that a worker identity lied: every
// running or resumable job it counted results in is purged of them and
// recomputed; it returns those jobs' ids.
type LiarPurger interface {
	DeclareLiar(ctx context.Context, identity, reason string) []string
}

// ArtifactUser names the running jobs that use an uploaded artifact, so
// that it is not removed under them.
type ArtifactUser interface {
	UsingArtifact(sha string) []string
}
