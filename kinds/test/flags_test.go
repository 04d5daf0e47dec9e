package test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

// settingsOf parses args with the kind's coordinator flags and reads the
// settings.
func settingsOf(t *testing.T, args ...string) (gamepair.Settings, error) {
	t.Helper()
	fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
	read := flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s, err := read()
	if err != nil {
		return gamepair.Settings{}, err
	}
	return s.(gamepair.Settings), nil
}

// TestCoordinatorFlags: the kind's coordinator flags read into its
// settings (the shipped default replays 5% and opens no tables), and a bad
// value is an error naming the flag and the value.
func TestCoordinatorFlags(t *testing.T) {
	s, err := settingsOf(t)
	if err != nil || s.ReplayFraction != 0.05 || s.DeterministicEngines != nil || s.Syzygy != nil {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	s, err = settingsOf(t, "--replay-fraction", "1", "--replay-deterministic", "stockfish,ethereal")
	if err != nil || s.ReplayFraction != 1 || strings.Join(s.DeterministicEngines, " ") != "stockfish ethereal" {
		t.Fatalf("given: %+v, %v", s, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay-fraction", "-0.1"}, "--replay-fraction -0.1: must be between 0 and 1"},
		{[]string{"--replay-fraction", "NaN"}, "--replay-fraction NaN: must be between 0 and 1"},
		{[]string{"--syzygy", "/no/such/tables"}, "--syzygy /no/such/tables: "},
	} {
		if _, err := settingsOf(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
	s, err = settingsOf(t, "--syzygy", tbtest.Dir(t))
	if err != nil || s.Syzygy == nil {
		t.Fatalf("--syzygy with the shared tables: %+v, %v", s, err)
	}
}
