package coordinator

// The kinds of job this coordinator runs: each registers itself with
// package workload from its package's init (its workload, spec, schema,
// page and report); a program puts a kind of kinds/ in with one blank
// import in kinds/install, never here (kinds/ is a floor above this one).
// The built-in test kind is named here for what only it has this release:
// its settings among the command's flags (Config), and the typed access
// of the services and pages that are its alone.
import (
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
)

// kindSettings are the kinds' settings from cfg, by kind
// (workload.Deps.Settings).
func (cfg Config) kindSettings() map[string]any {
	settings := map[string]any{
		testview.Kind: cfg.Games,
	}
	for kind, s := range cfg.KindSettings {
		settings[kind] = s
	}
	return settings
}

// Workload returns the workload of a registered kind.
func (c *Coordinator) Workload(kind string) (core.Workload, bool) {
	wl, ok := c.Workloads[kind]
	return wl, ok
}

// workloadOf is the workload of kind as its own type (nil when the kind
// is not registered).
func workloadOf[W core.Workload](c *Coordinator, kind string) W {
	wl, _ := c.Workloads[kind].(W)
	return wl
}

// Games is the workload of match and SPRT tests
// (testview.Tests), nil when the program installed no test kind.
func (c *Coordinator) Games() testview.Tests {
	return workloadOf[testview.Tests](c, testview.Kind)
}
