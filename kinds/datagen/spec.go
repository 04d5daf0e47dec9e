package datagen

// Conversions of DATAGEN settings between the library (dg.Settings) and
// the wire (DatagenSpec, DatagenBatch), one way for the client that
// submits, the coordinator that checks and cuts batches, and the worker
// that plays them.

import (
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Settings are the settings and record filters of a spec, with
// dg.DefaultSettings for what it leaves unset. Values past their
// bounds stay past them, for Validate to refuse.
func Settings(spec *arbiterv1.DatagenSpec) dg.Settings {
	s := playSettings(spec.GetNodes(), spec.GetRandomPliesMin(), spec.GetRandomPliesMax(), spec.GetOpenings(), spec.GetAdjudication())
	if fl := spec.GetFilters(); fl != nil {
		s.Filters = dg.Filters{SkipInCheck: !fl.GetKeepInCheck(), SkipTactical: !fl.GetKeepTactical(),
			SkipMates: !fl.GetKeepMates(), MinPly: int(min(fl.GetMinPly(), dg.MaxMinPly+1))}
	}
	return s
}

// BatchSettings are the settings a worker plays a batch with.
func BatchSettings(b *arbiterv1.DatagenBatch) dg.Settings {
	return playSettings(b.GetNodes(), b.GetRandomPliesMin(), b.GetRandomPliesMax(), b.GetOpenings(), b.GetAdjudication())
}

func playSettings(nodes uint64, lo, hi uint32, openings []string, a *arbiterv1.DatagenAdjudication) dg.Settings {
	s := dg.DefaultSettings()
	s.Nodes = int(min(nodes, dg.MaxNodes+1))
	s.RandomPliesMin, s.RandomPliesMax = int(lo), int(hi)
	s.Openings = openings
	if a != nil {
		s.Adjudication = dg.Adjudication{WinScore: int(a.GetWinScore()), WinMoves: int(a.GetWinMoves()),
			DrawMoveNumber: int(a.GetDrawMoveNumber()), DrawMoves: int(a.GetDrawMoves()), DrawScore: int(a.GetDrawScore()),
			MaxMoves: int(a.GetMaxMoves())}
		s.Tablebase.Pieces = int(min(a.GetTablebasePieces(), dg.MaxTBPieces+1))
	}
	return s
}

// Adjudication is the wire form of a.
func Adjudication(a dg.Adjudication) *arbiterv1.DatagenAdjudication {
	return &arbiterv1.DatagenAdjudication{WinScore: int32(a.WinScore), WinMoves: uint32(a.WinMoves),
		DrawMoveNumber: uint32(a.DrawMoveNumber), DrawMoves: uint32(a.DrawMoves), DrawScore: int32(a.DrawScore), MaxMoves: uint32(a.MaxMoves)}
}

// BatchAdjudication is the wire form of s's adjudication, tablebase
// included (a batch's and a spec's).
func BatchAdjudication(s dg.Settings) *arbiterv1.DatagenAdjudication {
	a := Adjudication(s.Adjudication)
	a.TablebasePieces = uint32(s.Tablebase.Pieces)
	return a
}

// Spec is the wire form of s (the engine, positions and seed are the
// caller's to fill in).
func Spec(s dg.Settings) *arbiterv1.DatagenSpec {
	return &arbiterv1.DatagenSpec{Nodes: uint64(s.Nodes), RandomPliesMin: uint32(s.RandomPliesMin), RandomPliesMax: uint32(s.RandomPliesMax),
		Openings: s.Openings, Adjudication: BatchAdjudication(s),
		Filters: &arbiterv1.DatagenFilters{KeepInCheck: !s.Filters.SkipInCheck, KeepTactical: !s.Filters.SkipTactical,
			KeepMates: !s.Filters.SkipMates, MinPly: uint32(s.Filters.MinPly)}}
}
