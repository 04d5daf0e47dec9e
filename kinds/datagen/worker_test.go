package datagen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/arbiter-chess/arbiter/base/capability"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker"
)

// Importing the kind is what makes a worker offer it: its init registers
// the runner, whose capability the worker then advertises.
func TestWorkerOffersDatagen(t *testing.T) {
	if caps := worker.RunnerCapabilities(); !slices.Contains(caps, capability.Datagen) {
		t.Fatalf("runner capabilities %q lack %q", caps, capability.Datagen)
	}
}

// A batch the runner cannot play is refused before any engine is made
// ready (the host is not touched), with a reason that says what is wrong;
// the control, a well-formed batch's check, is TestDatagenFull in
// coordinator/e2e.
func TestRunnerRefusesUnplayableUnits(t *testing.T) {
	_, err := runDatagenUnit(context.Background(), nil, &arbiterv1.DatagenBatch{Seed: 1, Games: 2})
	if !worker.IsRefusal(err) || !strings.Contains(err.Error(), "no engine") {
		t.Errorf("batch without an engine: %v; want a refusal saying it has no engine", err)
	}
	_, err = runDatagenUnit(context.Background(), nil, wrapperspb.String("x"))
	if !worker.IsRefusal(err) || !strings.Contains(err.Error(), "want a DatagenBatch") {
		t.Errorf("unit of another type: %v; want a refusal naming the type wanted", err)
	}
}
