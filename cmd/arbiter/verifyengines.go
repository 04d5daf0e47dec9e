package main

// --verify-engine: the engines under test a worker runs verify units for
// (arbiter verify --coordinator; the kind is kinds/verify).

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// addVerifyEngineFlag adds --verify-engine (repeatable) to a worker's flags.
func addVerifyEngineFlag(fl *pflag.FlagSet) *[]string {
	var specs []string
	fl.StringArrayVar(&specs, "verify-engine", nil,
		"an engine under test this worker runs for arbiter verify --coordinator: [name=NAME,]cmd=PATH[,args=...][,proto=uci|perftree][,option.X=V][,dir=D] (repeatable; NAME defaults to the program's base name)")
	return &specs
}

// parseVerifyEngines checks each --verify-engine (the program must exist).
func parseVerifyEngines(specs []string) ([]verifyproto.LocalEngine, error) {
	var out []verifyproto.LocalEngine
	seen := map[string]bool{}
	for _, s := range specs {
		e, err := verifyproto.ParseLocalEngine(s)
		if err != nil {
			return nil, usageError("--verify-engine: %v", err)
		}
		if seen[e.Name] {
			return nil, usageError("--verify-engine: engine name %q given twice", e.Name)
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	return out, nil
}

// verifyEnginesOf parses the --verify-engine flags of cmd.
func verifyEnginesOf(cmd *cobra.Command) ([]verifyproto.LocalEngine, error) {
	specs, err := cmd.Flags().GetStringArray("verify-engine")
	if err != nil {
		return nil, err
	}
	return parseVerifyEngines(specs)
}
