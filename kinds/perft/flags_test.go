package perft

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
)

// TestFlags: the kind's registration adds the coordinator's --perft-max-*
// flags; their values become the workload's settings, the defaults when
// none is given, and a bad value is refused naming its flag.
func TestFlags(t *testing.T) {
	k, ok := workload.Lookup(Kind)
	if !ok || k.Flags == nil {
		t.Fatal("the perft kind registers no flags")
	}
	parse := func(args ...string) (Config, error) {
		fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
		settings := k.Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		s, err := settings()
		if err != nil {
			return Config{}, err
		}
		return s.(Config), nil
	}
	cfg, err := parse()
	if err != nil || cfg.MaxNodes != DefaultMaxNodes || cfg.MaxHeldPositions != DefaultMaxHeldPositions || cfg.SplitLimits != perftsplit.DefaultLimits {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parse("--perft-max-nodes", "1e12", "--perft-max-held-positions", "12000", "--perft-max-split-positions", "900")
	if err != nil || cfg.MaxNodes != 1e12 || cfg.MaxHeldPositions != 12000 || cfg.SplitLimits.MaxPositions != 900 {
		t.Errorf("given: %+v, %v", cfg, err)
	}
	for _, c := range []struct{ flag, value string }{
		{"--perft-max-nodes", "-1"}, {"--perft-max-nodes", "NaN"}, {"--perft-max-held-positions", "-3"}, {"--perft-max-split-positions", "-2"},
	} {
		if _, err := parse(c.flag, c.value); err == nil || !strings.HasPrefix(err.Error(), c.flag+" "+c.value+":") {
			t.Errorf("%s %s: %v", c.flag, c.value, err)
		}
	}
}
