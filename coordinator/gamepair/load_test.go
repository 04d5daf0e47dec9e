package gamepair

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// A job that fails to load is skipped, unless closing it failed in the
// store (wrapped or not) or the context ended: then Load fails.
func TestLoadFailure(t *testing.T) {
	ctx := context.Background()
	if err := LoadFailure(ctx, errors.New("bad spec")); err != nil {
		t.Fatalf("a bad job: %v, want it skipped", err)
	}
	closing := fmt.Errorf("tune t1: %w", NewCloseError(errors.New("disk full")))
	if err := LoadFailure(ctx, closing); err != closing {
		t.Fatalf("a failed close: %v, want Load to fail with it", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := LoadFailure(cctx, errors.New("bad spec")); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}
