package gamepair

import (
	"context"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// StreamPGNs passes every stored game of a job to fn in the store's order.
// fn's own error is returned as it is (a client that went away is not a
// store failure), so is the context's; any other error is the store's.
func StreamPGNs(ctx context.Context, st *store.Store, jobID string, fn func(pgn string) error) error {
	var fnErr error
	err := st.PGNs(ctx, jobID, func(p string) error {
		fnErr = fn(p)
		return fnErr
	})
	switch {
	case err == nil:
		return nil
	case fnErr != nil:
		return fnErr
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return apierr.Store(err)
}
