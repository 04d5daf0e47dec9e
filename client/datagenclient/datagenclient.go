// Package datagenclient is what a program needs of DATAGEN on a
// coordinator (submit a dataset, follow it, pull it) without importing
// the kind: a kind's package is imported by kinds/install alone
// (kinds/kindtest), so kinds/datagen registers its own submit and pull
// here from init, and callers above the kinds (local/netloop, the net
// loop on a farm) call them through Get. One implementation: the code of
// `arbiter submit datagen` and `arbiter datagen pull`.
package datagenclient

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Datasets is DATAGEN's client side.
type Datasets interface {
	// Submit submits the dataset `arbiter submit datagen --engine ENGINE
	// --each EACH --positions N --random-seed SEED` submits (its other
	// flags at their defaults), uploading what ENGINE names (upload=,
	// source=, net=FILE) first; progress gets the uploads' lines. It
	// returns the job's id; errors name the flag or the call.
	Submit(ctx context.Context, c *clusterclient.Client, engine, each string, positions int, seed uint64, progress io.Writer) (string, error)
	// PullText writes the records of dataset jobID to the new file out
	// in bullet's text format, as `arbiter datagen pull --format text`.
	PullText(ctx context.Context, c *clusterclient.Client, jobID, out string) error
	// Of is a job's dataset detail (nil for another kind of job).
	Of(j *arbiterv1.Job) *arbiterv1.DatagenJob
}

var (
	mu  sync.Mutex
	reg Datasets
)

// Register installs DATAGEN's client side (kinds/datagen's init).
func Register(d Datasets) {
	mu.Lock()
	defer mu.Unlock()
	reg = d
}

// Get returns DATAGEN's client side, or an error when the binary was
// built without the kind.
func Get() (Datasets, error) {
	mu.Lock()
	defer mu.Unlock()
	if reg == nil {
		return nil, errors.New("DATAGEN is not built into this program (kinds/datagen is not installed)")
	}
	return reg, nil
}
