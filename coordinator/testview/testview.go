// Package testview is what the doors of the coordinator (its pages, its
// gRPC services) know of the test kind (match and SPRT tests, kinds/test)
// without importing it: the workload's kind name, the interface its
// workload answers (Tests, found among the core's workloads), the views
// that interface returns (a test's history, batches, events, a worker's
// activity), the limits of what a test may ask for, and the checks of its
// tags and notes that the forms apply before a spec is built.
//
// The kind's package sits a floor above the doors (docs/layout.md); the
// doors reach its workload through Of, the way the pages reach verify
// sessions (web.VerifySessions).
package testview

import (
	"context"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Kind is the test workload's kind (core.Create's kind argument); its
// jobs are stored as jobkind.SPRT or jobkind.Match.
const Kind = "test"

// Limits on what a test may ask for.
const (
	// MaxBatchPairs bounds a batch, so that its result (2 × pairs PGNs)
	// fits one message.
	MaxBatchPairs = gamepair.MaxBatchPairs
	// MaxGames bounds a test's games; an SPRT without a cap on games stops
	// there too, which bounds every batch index.
	MaxGames = 100_000_000
	// MaxPairs is MaxGames in pairs.
	MaxPairs = MaxGames / 2
)

// Tests is the test workload as the doors read and act on it.
type Tests interface {
	core.Workload
	// PublicSnapshot is what anonymous pages show of test jobID.
	PublicSnapshot(jobID string) (*arbiterv1.Job, bool)
	// History is the test's statistics after its batches, thinned, the
	// origin first.
	History(ctx context.Context, jobID string) ([]HistoryPoint, error)
	// Events are the test's events, oldest first.
	Events(ctx context.Context, jobID string) ([]Event, error)
	// Batches are the test's counted batches in acceptance order.
	Batches(ctx context.Context, jobID string) ([]BatchInfo, error)
	// PGN is game game of batch batch of test jobID.
	PGN(ctx context.Context, jobID string, batch, game int) (string, error)
	// PGNs calls fn with every stored game of test jobID, by batch then
	// game.
	PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error
	// Verifications are the tests that verify tune tuneID, in submission
	// order.
	Verifications(tuneID string) []*arbiterv1.SpsaVerification
	// WorkerActivity is, by worker id, the games and incidents of the last
	// gamepair.ActivityWindow and the running tests each worker is
	// excluded from.
	WorkerActivity() map[string]Activity
	// Reschedule submits, on behalf of caller, a copy of test jobID that
	// links to it.
	Reschedule(ctx context.Context, c *core.Core, caller identity.Identity, jobID string) (core.JobRef, error)
}

// Of is the test workload among c's workloads, nil when the program
// installed no test kind.
func Of(workloads []core.Workload) Tests {
	for _, wl := range workloads {
		if t, ok := wl.(Tests); ok && wl.Kind() == Kind {
			return t
		}
	}
	return nil
}

// HistoryPoint is a test's statistics after some batches.
type HistoryPoint struct {
	Games int64
	// LLR after these games (0 for a match without SPRT).
	LLR float64
	// Elo and its 95% interval (0 before the first game).
	Elo, EloLow, EloHigh float64
}

// BatchInfo is one counted batch of a test.
type BatchInfo struct {
	Index    int
	WorkerID string
	Pairs    int
	// Wins, Draws and Losses are engine A's.
	Wins, Draws, Losses int64
	At                  time.Time
}

// Event is something that happened to a worker in a test: a lost lease, a
// refusal, an exclusion, or an incident of a game (with its reason).
type Event struct {
	Kind     string // "disconnect", "refused", "excluded" or "incident"
	UnitID   string
	WorkerID string
	Detail   string
	At       time.Time
}

// Activity is what a worker did over the last gamepair.ActivityWindow.
type Activity struct {
	Games, Incidents int64
	// Excluded lists the running tests the worker gets no more batches of
	// (excluded for its incidents or results, or unable to run them).
	Excluded []string
	// FarOff lists those it was excluded from for its results: they lie
	// far from the other workers' (gamepair residuals).
	FarOff []string
}
