package matchplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// Config is a local match as JSON: what `arbiter match --config FILE`
// reads and what the state file keeps to resume it. Field names are
// fastchess's where fastchess has the field (its config.json: type,
// gauntlet_seeds, rounds, games, concurrency, ratinginterval, recover,
// opening, pgn, sprt, draw, resign, maxmoves, event_name, and engines with
// name, cmd, args, dir, options, limit); the rest are arbiter's flag names.
// Unknown fields are refused, so that a misspelt one is not silently
// ignored.
type Config struct {
	Engines        []ConfigEngine `json:"engines"`
	Each           string         `json:"each,omitempty"`
	Type           string         `json:"type,omitempty"`
	GauntletSeeds  int            `json:"gauntlet_seeds,omitempty"`
	Rounds         int            `json:"rounds,omitempty"`
	Games          int            `json:"games,omitempty"`
	Repeat         int            `json:"repeat,omitempty"`
	NoSwap         bool           `json:"noswap,omitempty"`
	Reverse        bool           `json:"reverse,omitempty"`
	Concurrency    int            `json:"concurrency,omitempty"`
	RatingInterval *int           `json:"ratinginterval,omitempty"`
	Recover        *bool          `json:"recover,omitempty"`
	Opening        *ConfigOpening `json:"opening,omitempty"`
	PGN            *ConfigPGN     `json:"pgn,omitempty"`
	SPRT           *ConfigSPRT    `json:"sprt,omitempty"`
	Draw           *ConfigDraw    `json:"draw,omitempty"`
	Resign         *ConfigResign  `json:"resign,omitempty"`
	MaxMoves       *ConfigMax     `json:"maxmoves,omitempty"`
	TimeMargin     int            `json:"timemargin,omitempty"`  // ms
	HangTimeout    int            `json:"hangtimeout,omitempty"` // ms
	Event          string         `json:"event_name,omitempty"`
}

// ConfigEngine is one engine: an --engine string ("name=a,cmd=./a,...")
// or an object.
type ConfigEngine struct {
	Spec string `json:"-"`

	Name    string          `json:"name,omitempty"`
	Cmd     string          `json:"cmd,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"` // a string split at blanks, or a list
	Dir     string          `json:"dir,omitempty"`
	Proto   string          `json:"proto,omitempty"`
	Options json.RawMessage `json:"options,omitempty"` // {"Hash": "16"} or [["Hash", "16"]]
	Limit   *ConfigLimit    `json:"limit,omitempty"`
}

// ConfigLimit is fastchess's engine limit: milliseconds, plies for depth.
type ConfigLimit struct {
	TC *struct {
		Time      int64 `json:"time"`      // ms
		Increment int64 `json:"increment"` // ms
		Moves     int   `json:"moves"`
		FixedTime int64 `json:"fixed_time"` // ms per move
	} `json:"tc,omitempty"`
	Nodes int64 `json:"nodes,omitempty"`
	Plies int   `json:"plies,omitempty"`
}

type ConfigOpening struct {
	File   string `json:"file"`
	Format string `json:"format,omitempty"`
	Order  string `json:"order,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	Plies  int    `json:"plies,omitempty"`
	Start  int    `json:"start,omitempty"`
}

type ConfigPGN struct {
	File string `json:"file"`
}

type ConfigSPRT struct {
	Elo0  float64 `json:"elo0"`
	Elo1  float64 `json:"elo1"`
	Alpha float64 `json:"alpha,omitempty"`
	Beta  float64 `json:"beta,omitempty"`
	Model string  `json:"model,omitempty"`
}

type ConfigDraw struct {
	MoveNumber int  `json:"move_number"`
	MoveCount  int  `json:"move_count"`
	Score      int  `json:"score"`
	Enabled    bool `json:"enabled"`
}

type ConfigResign struct {
	MoveCount int  `json:"move_count"`
	Score     int  `json:"score"`
	Enabled   bool `json:"enabled"`
}

type ConfigMax struct {
	MoveCount int  `json:"move_count"`
	Enabled   bool `json:"enabled"`
}

func (e *ConfigEngine) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Spec)
	}
	type plain ConfigEngine
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode((*plain)(e))
}

func (e ConfigEngine) MarshalJSON() ([]byte, error) {
	if e.Spec != "" {
		return json.Marshal(e.Spec)
	}
	type plain ConfigEngine
	return json.Marshal(plain(e))
}

// LoadConfig reads a --config file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %v", err)
	}
	return ParseConfig(b, "--config "+path)
}

// ParseConfig reads a config; what names the source in errors.
func ParseConfig(b []byte, what string) (*Config, error) {
	var c Config
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return &c, nil
}

// spec is the engine as an --engine string.
func (e ConfigEngine) spec(i int) (string, error) {
	if e.Spec != "" {
		return e.Spec, nil
	}
	s := enginespec.Spec{Name: e.Name, Cmd: e.Cmd, Dir: e.Dir, Proto: enginespec.Proto(e.Proto)}
	if len(e.Args) > 0 {
		var one string
		var list []string
		switch {
		case json.Unmarshal(e.Args, &one) == nil:
			s.Args = strings.Fields(one)
		case json.Unmarshal(e.Args, &list) == nil:
			s.Args = list
		default:
			return "", fmt.Errorf("engine #%d: args: want a string or a list of strings", i+1)
		}
	}
	if len(e.Options) > 0 {
		var obj map[string]any
		var pairs [][]any
		switch {
		case json.Unmarshal(e.Options, &pairs) == nil:
			for _, p := range pairs {
				if len(p) != 2 {
					return "", fmt.Errorf("engine #%d: options: want [name, value] pairs", i+1)
				}
				s.Options = append(s.Options, enginespec.Setting{Key: fmt.Sprint(p[0]), Value: fmt.Sprint(p[1])})
			}
		case json.Unmarshal(e.Options, &obj) == nil:
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			// A JSON object has no order; engines get their options sorted.
			slices.Sort(keys)
			for _, k := range keys {
				s.Options = append(s.Options, enginespec.Setting{Key: k, Value: fmt.Sprint(obj[k])})
			}
		default:
			return "", fmt.Errorf("engine #%d: options: want an object or a list of [name, value] pairs", i+1)
		}
	}
	if l := e.Limit; l != nil {
		if tc := l.TC; tc != nil {
			switch {
			case tc.FixedTime > 0:
				s.Limits = append(s.Limits, enginespec.Setting{Key: "movetime", Value: strconv.FormatInt(tc.FixedTime, 10)})
			case tc.Time > 0:
				v := seconds(tc.Time) + "+" + seconds(tc.Increment)
				if tc.Moves > 0 {
					v = strconv.Itoa(tc.Moves) + "/" + v
				}
				s.Limits = append(s.Limits, enginespec.Setting{Key: "tc", Value: v})
			}
		}
		if l.Nodes > 0 {
			s.Limits = append(s.Limits, enginespec.Setting{Key: "nodes", Value: strconv.FormatInt(l.Nodes, 10)})
		}
		if l.Plies > 0 {
			s.Limits = append(s.Limits, enginespec.Setting{Key: "depth", Value: strconv.Itoa(l.Plies)})
		}
	}
	return s.String(), nil
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) }

// Flags are the config as match flags (before Parse checks them); flags
// the config leaves out keep their defaults from def.
func (c *Config) Flags(def Flags) (Flags, error) {
	f := def
	f.Engines = nil
	for i, e := range c.Engines {
		s, err := e.spec(i)
		if err != nil {
			return f, err
		}
		f.Engines = append(f.Engines, s)
	}
	set := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	if c.Each != "" {
		f.Each = c.Each
	}
	if c.Type != "" {
		f.Tournament = c.Type
	}
	set(&f.Seeds, c.GauntletSeeds)
	set(&f.Rounds, c.Rounds)
	set(&f.Games, c.Games)
	set(&f.Repeat, c.Repeat)
	f.NoSwap = f.NoSwap || c.NoSwap
	f.Reverse = f.Reverse || c.Reverse
	set(&f.Concurrency, c.Concurrency)
	set(&f.TimeMargin, c.TimeMargin)
	set(&f.HangTimeout, c.HangTimeout)
	if c.RatingInterval != nil {
		f.RatingInterval = *c.RatingInterval
	}
	if c.Recover != nil {
		f.Recover = *c.Recover
	}
	if o := c.Opening; o != nil {
		kv := []string{"file=" + o.File}
		if o.Format != "" {
			kv = append(kv, "format="+o.Format)
		}
		if o.Order != "" {
			kv = append(kv, "order="+o.Order)
		}
		if o.Seed != 0 {
			kv = append(kv, "seed="+strconv.FormatUint(o.Seed, 10))
		}
		if o.Plies != 0 {
			kv = append(kv, "plies="+strconv.Itoa(o.Plies))
		}
		if o.Start != 0 {
			kv = append(kv, "start="+strconv.Itoa(o.Start))
		}
		f.Openings = strings.Join(kv, ",")
	}
	if c.PGN != nil {
		f.PGNOut = c.PGN.File
	}
	if s := c.SPRT; s != nil {
		v := "elo0=" + ftoa(s.Elo0) + ",elo1=" + ftoa(s.Elo1)
		if s.Alpha != 0 {
			v += ",alpha=" + ftoa(s.Alpha)
		}
		if s.Beta != 0 {
			v += ",beta=" + ftoa(s.Beta)
		}
		if s.Model != "" {
			v += ",model=" + s.Model
		}
		f.SPRT = v
	}
	if d := c.Draw; d != nil && d.Enabled {
		f.Draw = fmt.Sprintf("movenumber=%d,movecount=%d,score=%d", d.MoveNumber, d.MoveCount, d.Score)
	}
	if r := c.Resign; r != nil && r.Enabled {
		f.Resign = fmt.Sprintf("movecount=%d,score=%d", r.MoveCount, r.Score)
	}
	if m := c.MaxMoves; m != nil && m.Enabled {
		f.MaxMoves = m.MoveCount
	}
	if c.Event != "" {
		f.Event = c.Event
	}
	return f, nil
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// ConfigOf is the plan as a config: what the state file keeps, so that
// `--resume` plays the same match. The book and PGN file are made
// absolute, so that the match resumes from any directory.
func ConfigOf(p *Plan) *Config {
	f := p.Flags
	c := &Config{Each: f.Each, Concurrency: f.Concurrency,
		TimeMargin: f.TimeMargin, HangTimeout: f.HangTimeout, Event: f.Event}
	for _, e := range f.Engines {
		c.Engines = append(c.Engines, ConfigEngine{Spec: e})
	}
	if f.tournamentGiven() {
		c.Type, c.Rounds = string(p.Schedule.Kind), f.Rounds
		if p.Schedule.Kind == "gauntlet" {
			c.GauntletSeeds = p.Schedule.Seeds
		}
		c.Games, c.Repeat = p.Schedule.Games, p.Schedule.Repeat
		c.NoSwap, c.Reverse = p.Schedule.NoSwap, p.Schedule.Reverse
	} else {
		c.Games = f.Games
	}
	ri, rec := f.RatingInterval, f.Recover
	c.RatingInterval, c.Recover = &ri, &rec
	if p.Book != nil {
		bo := p.BookOptions
		c.Opening = &ConfigOpening{File: absPath(bo.Path), Format: bo.Format, Order: bo.Order, Seed: bo.Seed, Plies: bo.Plies, Start: bo.Start}
	}
	if f.PGNOut != "" {
		c.PGN = &ConfigPGN{File: absPath(f.PGNOut)}
	}
	if s := p.SPRT; s != nil {
		c.SPRT = &ConfigSPRT{Elo0: s.Elo0, Elo1: s.Elo1, Alpha: s.Alpha, Beta: s.Beta, Model: string(s.Model)}
	}
	adj := p.Config.Game.Adjudication
	if adj.DrawMoves > 0 {
		c.Draw = &ConfigDraw{MoveNumber: adj.DrawMoveNumber, MoveCount: adj.DrawMoves, Score: adj.DrawScore, Enabled: true}
	}
	if adj.ResignMoves > 0 {
		c.Resign = &ConfigResign{MoveCount: adj.ResignMoves, Score: adj.ResignScore, Enabled: true}
	}
	if adj.MaxMoves > 0 {
		c.MaxMoves = &ConfigMax{MoveCount: adj.MaxMoves, Enabled: true}
	}
	return c
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
