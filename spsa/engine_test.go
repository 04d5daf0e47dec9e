package spsa

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// The embedded engine's parameters come with their table's step as c_end.
func TestFromBuiltin(t *testing.T) {
	decls, err := BuiltinOptions()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := FromEngine(decls, []string{"rfpmargin", "AspWindow"})
	if err != nil {
		t.Fatal(err)
	}
	rfp := search.Params[search.RFPMargin]
	if ps[0] != (Param{Name: "RFPMargin", Start: float64(rfp.Default), Min: float64(rfp.Min), Max: float64(rfp.Max), CEnd: float64(rfp.Step), REnd: DefaultREnd}) {
		t.Errorf("RFPMargin: %+v", ps[0])
	}
	all, err := FromEngine(decls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 49 + int(search.NumParams); len(all) != want {
		t.Errorf("%d tunable options of the embedded engine, want its %d parameters", len(all), want)
	}
	for _, p := range all {
		if !tunable(p.Name) {
			t.Errorf("%s offered for tuning", p.Name)
		}
	}
	if err := CheckAgainst(all, decls); err != nil {
		t.Error(err)
	}
	refusals := []struct {
		names []string
		want  string
	}{
		{[]string{"NoSuchParam"}, `param "NoSuchParam": the engine has no option of that name`},
		{[]string{"UCI_Chess960"}, `param "UCI_Chess960": the engine's option is a check, not a spin`},
		{[]string{"Clear Hash"}, "is a button, not a spin"},
		{[]string{"RFPMargin", "rfpmargin"}, "named twice"},
	}
	for _, r := range refusals {
		if _, err := FromEngine(decls, r.names); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%v: %v", r.names, err)
		}
	}
	bad := []struct {
		p    Param
		want string
	}{
		{Param{Name: "Nope", Start: 1, Max: 2, CEnd: 1, REnd: 1}, `param "Nope": the engine has no option`},
		{Param{Name: "Ponder", Start: 1, Max: 2, CEnd: 1, REnd: 1}, "is a check, not a spin"},
		{Param{Name: "RFPMargin", Start: 50, Min: 10, Max: 100, CEnd: 1, REnd: 1}, "min 10 is below the engine's min 20"},
		{Param{Name: "RFPMargin", Start: 50, Min: 20, Max: 400, CEnd: 1, REnd: 1}, "max 400 is above the engine's max 300"},
		{Param{Name: "RFPMargin", Float: true, Start: 50, Min: 20, Max: 40, CEnd: 1, REnd: 1}, "real-valued"},
	}
	for _, b := range bad {
		if err := CheckAgainst([]Param{b.p}, decls); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v", b.p, err)
		}
	}
}

// A real UCI engine's spin options, read over its protocol.
func TestFromUCIEngine(t *testing.T) {
	sf := "/usr/games/stockfish"
	if _, err := os.Stat(sf); err != nil {
		t.Skip("stockfish is not installed")
	}
	decls, err := ReadUCIOptions(context.Background(), engineproc.Config{Path: sf}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Stockfish declares only set-up spins (Hash, Threads, MultiPV, ...):
	// nothing to tune unless named.
	if _, err := FromEngine(decls, nil); err == nil || !strings.Contains(err.Error(), "no spin option to tune") {
		t.Errorf("every option of stockfish: %v", err)
	}
	ps, err := FromEngine(decls, []string{"Skill Level", "Move Overhead"})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0] != (Param{Name: "Skill Level", Start: 20, Min: 0, Max: 20, CEnd: 1, REnd: DefaultREnd}) || ps[1].Name != "Move Overhead" {
		t.Errorf("stockfish: %+v", ps)
	}
	if _, err := FromEngine(decls, []string{"SyzygyPath"}); err == nil || !strings.Contains(err.Error(), "is a string, not a spin") {
		t.Errorf("SyzygyPath: %v", err)
	}
}

// A program that is not a UCI engine is named in the error.
func TestReadUCIOptionsRefusals(t *testing.T) {
	if _, err := ReadUCIOptions(context.Background(), engineproc.Config{Path: "/nonexistent/engine"}, 0); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/engine") {
		t.Errorf("missing engine: %v", err)
	}
	script := filepath.Join(t.TempDir(), "silent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'option name X type spin default 1 min 0 max 5'\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := ReadUCIOptions(context.Background(), engineproc.Config{Path: script}, 300e6)
	if err == nil || !strings.Contains(err.Error(), "no uciok") || !strings.Contains(err.Error(), "silent.sh") {
		t.Errorf("engine without uciok: %v", err)
	}
}

// A spin declared with decimals (fastchess reads it as a double) bounds a
// parameter by its real range; it is not made a parameter by name.
func TestRealSpinOption(t *testing.T) {
	var opts protocol.Options
	opts.AddLine("option name Scale type spin default 0.5 min 0 max 1")
	decls := []OptionDecl{{Option: opts.List()[0]}}
	if err := CheckAgainst([]Param{{Name: "Scale", Start: 1, Min: 0, Max: 2}}, decls); err == nil || !strings.Contains(err.Error(), "max 2 is above the engine's max 1") {
		t.Errorf("out of the real range: %v", err)
	}
	if err := CheckAgainst([]Param{{Name: "Scale", Start: 1, Min: 0, Max: 1}}, decls); err != nil {
		t.Errorf("within the real range: %v", err)
	}
	if _, err := FromEngine(decls, []string{"Scale"}); err == nil || !strings.Contains(err.Error(), "real-valued (0..1)") {
		t.Errorf("from-engine of a real spin: %v", err)
	}
}
