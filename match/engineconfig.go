package match

import (
	"fmt"
	"strconv"
	"time"
)

// Option is one engine option to set, kept in the order given.
type Option struct{ Name, Value string }

// DeclaredOption is an option as a UCI engine declared it, its fields as
// written: a well-formed declaration that enginehost/protocol read (a
// malformed one is not offered to ChooseOptions).
type DeclaredOption struct {
	Name, Type, Default string
	Min, Max            string // "" when not given
	Vars                []string
}

// EngineConfig says how to start a player.
type EngineConfig struct {
	// Name is shown in reports and PGN. A tournament names an engine
	// without one after what the engine calls itself (UCI `id name`,
	// xboard `myname`), made unique.
	Name    string
	Cmd     string   // executable (path or name on PATH); empty for builtin
	Args    []string // arguments
	Dir     string   // working directory; "" = current
	Proto   string   // "uci" (default), "xboard", or "builtin"
	Options []Option
	// ChooseOptions, when set, picks the options sent to a UCI engine each
	// time it starts, once the engine has declared its own: they are sent
	// as given, unchecked, and an option it leaves out is neither sent nor
	// refused. Without it every option must be declared and its value in
	// range, or the engine does not start. The fastchess drop-in sets it
	// to warn and go on as fastchess does. It is called from the goroutine
	// that starts the engine, one call per engine process.
	ChooseOptions func(declared []DeclaredOption, given []Option) []Option
	// Limits overrides the match's limits for this engine when non-zero
	// (time odds, node odds).
	Limits Limits
	// MovegenGate, when set ("uci": the engine answers `go perft`), asks
	// for verify's movegen gate before the engine's first game. The match
	// library does not read it: the runners of a test do (the local match,
	// the worker) before they play.
	MovegenGate string
	// SyzygyPieces, when above 0, has the builtin engine probe Syzygy
	// tables in search up to that many pieces, with the tables of the
	// machine that plays (a local match's --tb DIR, a worker's --syzygy
	// DIR): WithSyzygy turns it into the engine's SyzygyPath and
	// SyzygyProbeLimit, and NewPlayer refuses an engine still asking.
	SyzygyPieces int

	StartTimeout time.Duration // for uciok / feature done=1; default 10s
	ReadyTimeout time.Duration // for readyok / pong; default 10s
	// StopGrace is how long the driver waits for the move after asking an
	// engine that ran out of time to stop (UCI stop, xboard ?) before it
	// declares the engine hung and kills it; default 1s.
	StopGrace time.Duration
}

// LimitsOr is the engine's limits: its own when it has any (time or node
// odds), else each, the match's.
func (c *EngineConfig) LimitsOr(each Limits) Limits {
	if c.Limits != (Limits{}) {
		return c.Limits
	}
	return each
}

// label names the engine in errors: its name, or its program while it has
// none yet.
func (c *EngineConfig) label() string {
	switch {
	case c.Name != "":
		return strconv.Quote(c.Name)
	case c.Cmd != "":
		return strconv.Quote(c.Cmd)
	}
	return strconv.Quote(c.Proto)
}

func (c *EngineConfig) stopGrace() time.Duration {
	if c.StopGrace > 0 {
		return c.StopGrace
	}
	return time.Second
}

func (c *EngineConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return 10 * time.Second
}

func (c *EngineConfig) readyTimeout() time.Duration {
	if c.ReadyTimeout > 0 {
		return c.ReadyTimeout
	}
	return 10 * time.Second
}

// NewPlayer starts the player that cfg describes: the process is running,
// has answered the protocol handshake, and every option is set and checked
// against what the engine declares. An engine with Proto "builtin" is made
// by builtin (nil: the embedded engine is not available to this caller).
func NewPlayer(cfg EngineConfig, builtin BuiltinFactory) (Player, error) {
	switch cfg.Proto {
	case "", "uci":
		return NewUCIPlayer(cfg)
	case "xboard", "cecp":
		return NewXboardPlayer(cfg)
	case "builtin":
		if builtin == nil {
			return nil, fmt.Errorf("engine %s: the builtin engine is not available here (no factory given)", cfg.label())
		}
		if cfg.SyzygyPieces > 0 {
			return nil, fmt.Errorf("engine %s: syzygy=%d: no Syzygy tables were given to this match", cfg.label(), cfg.SyzygyPieces)
		}
		return builtin(cfg.Name, cfg.OptionMap())
	}
	return nil, fmt.Errorf("engine %s: unknown protocol %q (want uci, xboard or builtin)", cfg.label(), cfg.Proto)
}

// The embedded engine's tablebase options (engine/search's, as UCI names
// them; Stockfish's names).
const (
	optSyzygyPath       = "SyzygyPath"
	optSyzygyProbeLimit = "SyzygyProbeLimit"
)

// WithSyzygy resolves SyzygyPieces on the tables of the machine that
// plays: dir holds tables of at most have pieces ("" and 0: none). The
// engine gets SyzygyPath=dir and SyzygyProbeLimit=SyzygyPieces; an engine
// asking for more pieces than the tables have, or for tables where there
// are none, is an error naming it.
func (cfg EngineConfig) WithSyzygy(dir string, have int) (EngineConfig, error) {
	n := cfg.SyzygyPieces
	if n <= 0 {
		return cfg, nil
	}
	if dir == "" || have <= 0 {
		return cfg, fmt.Errorf("engine %s: syzygy=%d probes the tables of the machine that plays, and it has none (arbiter worker --syzygy DIR; a local match: --tb DIR)", cfg.label(), n)
	}
	if have < n {
		return cfg, fmt.Errorf("engine %s: syzygy=%d: the tables in %s have at most %d pieces", cfg.label(), n, dir, have)
	}
	cfg.Options = append(append([]Option(nil), cfg.Options...),
		Option{Name: optSyzygyPath, Value: dir}, Option{Name: optSyzygyProbeLimit, Value: strconv.Itoa(n)})
	cfg.SyzygyPieces = 0
	return cfg, nil
}

// OptionMap is Options by name (the last value of a name given twice).
func (cfg EngineConfig) OptionMap() map[string]string {
	opts := make(map[string]string, len(cfg.Options))
	for _, o := range cfg.Options {
		opts[o.Name] = o.Value
	}
	return opts
}
