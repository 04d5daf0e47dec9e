package uci

import (
	"context"
	"io"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/search"
)

// searchEngine adapts *search.Engine to the Engine interface.
type searchEngine struct{ *search.Engine }

func (e searchEngine) Start(ctx context.Context, pos engine.Position, history []uint64, lim search.Limits) Running {
	return e.Engine.Start(ctx, pos, history, lim)
}

func (e searchEngine) SetInfoHandler(f func(search.Info)) { e.Engine.OnInfo = f }

// Wrap adapts the built-in engine for a Server.
func Wrap(e *search.Engine) Engine { return searchEngine{e} }

// Main runs a UCI session of the built-in engine (default options) on in
// and out: what `arbiter uci` does.
func Main(in io.Reader, out io.Writer) error {
	e, err := search.NewEngine(nil)
	if err != nil {
		return err
	}
	return NewServer(Wrap(e), out).Run(in)
}
