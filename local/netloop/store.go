package netloop

// The loop's directory:
//
//	DIR/loop.json             the loop's settings (Settings) and generations asked for
//	DIR/openings.epd          the SPRT's openings, when --openings is not given
//	DIR/steps/KEY/            one step: its outputs, "attempts" (runs so far), and
//	DIR/steps/KEY/done.json   its Result, written last (by rename): the step is done
//	DIR/best.nnue, best.json  the best net, written by a ship step

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/filehash"
	"github.com/arbiter-chess/arbiter/engine"
)

// loopFile is DIR/loop.json.
type loopFile struct {
	Settings    Settings `json:"settings"`
	Generations int      `json:"generations"`
}

// Dir is a loop's directory.
type Dir string

func (d Dir) path(parts ...string) string {
	return filepath.Join(append([]string{string(d)}, parts...)...)
}

// StepDir is where step key keeps its outputs.
func (d Dir) StepDir(key string) string { return d.path("steps", key) }

// Load reads DIR/loop.json.
func (d Dir) Load() (Settings, int, error) {
	b, err := os.ReadFile(d.path("loop.json"))
	if errors.Is(err, os.ErrNotExist) {
		return Settings{}, 0, fmt.Errorf("--dir %s: no loop here (no loop.json): start one with arbiter net loop --dir %s --engine ... ", d, d)
	}
	if err != nil {
		return Settings{}, 0, fmt.Errorf("--dir %s: %v", d, err)
	}
	var lf loopFile
	if err := json.Unmarshal(b, &lf); err != nil {
		return Settings{}, 0, fmt.Errorf("--dir %s: loop.json: %v", d, err)
	}
	return lf.Settings, lf.Generations, nil
}

// Open makes DIR the loop of s: a new directory gets loop.json; one of a
// loop with other settings is refused, naming the setting, unless
// forceNew (the steps stay: those whose keys the new settings give again
// are reused).
func (d Dir) Open(s Settings, gens int, forceNew bool) error {
	if err := os.MkdirAll(d.path("steps"), 0o755); err != nil {
		return fmt.Errorf("--dir %s: %v", d, err)
	}
	old, _, err := d.Load()
	if _, statErr := os.Stat(d.path("loop.json")); statErr == nil && !forceNew {
		if err != nil {
			return err
		}
		if diff := Diff(old, s); diff != "" {
			return fmt.Errorf("--dir %s belongs to a loop of other settings: %s (run it with its own settings, use another --dir, or give --force-new)", d, diff)
		}
	}
	b, _ := json.MarshalIndent(loopFile{Settings: s, Generations: gens}, "", "  ")
	return writeAtomic(d.path("loop.json"), append(b, '\n'))
}

// Done is the lookup the core reads: the step's Result if its done
// marker is there and reads.
func (d Dir) Done(key string) *Result {
	b, err := os.ReadFile(filepath.Join(d.StepDir(key), "done.json"))
	if err != nil {
		return nil
	}
	var r Result
	if json.Unmarshal(b, &r) != nil || r.Key != key || !d.outputIntact(&r) {
		return nil
	}
	return &r
}

// outputIntact reports whether a done step's output is still what it
// wrote: a dataset of its size (hashing it at every look would cost
// minutes for a large one), a net of its SHA-256. A step whose output
// went is not done: the next run makes it again.
func (d Dir) outputIntact(r *Result) bool {
	switch r.Kind {
	case KindDatagen:
		fi, err := os.Stat(d.DataPath(r.Key))
		return err == nil && fi.Size() == r.Bytes
	case KindTrain:
		sum, err := filehash.SHA256(filepath.Join(d.StepDir(r.Key), "net.nnue"))
		return err == nil && sum == r.NetSHA
	}
	return true
}

// Started reports whether a step has been run (its directory exists).
func (d Dir) Started(key string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(d.StepDir(key), "attempts"))
	if err != nil {
		return 0, false
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, true
}

// begin counts a run of step key and returns its number.
func (d Dir) begin(key string) (int, error) {
	if err := os.MkdirAll(d.StepDir(key), 0o755); err != nil {
		return 0, err
	}
	n, _ := d.Started(key)
	n++
	return n, writeAtomic(filepath.Join(d.StepDir(key), "attempts"), []byte(strconv.Itoa(n)+"\n"))
}

// finish writes step r's done marker, last.
func (d Dir) finish(r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.StepDir(r.Key), "done.json"), append(b, '\n'))
}

// NetPath is the file of net n ("" for the embedded one).
func (d Dir) NetPath(n Net) string {
	if n.Step == "" {
		return ""
	}
	return filepath.Join(d.StepDir(n.Step), "net.nnue")
}

// DataPath is a datagen step's data.
func (d Dir) DataPath(key string) string { return filepath.Join(d.StepDir(key), "data.txt") }

// Openings returns the SPRT's --openings value and its file's SHA-256:
// the one given, or DIR/openings.epd, drawn once from the seed.
func (d Dir) Openings(given string, seed uint64) (string, string, error) {
	file := ""
	if given != "" {
		for _, part := range strings.Split(given, ",") {
			if k, v, _ := strings.Cut(strings.TrimSpace(part), "="); k == "file" {
				file = v
			}
		}
		if file == "" {
			return "", "", fmt.Errorf("--openings %q: missing file=", given)
		}
	} else {
		file = d.path("openings.epd")
		given = "file=" + file + ",order=random,seed=1"
		if _, err := os.Stat(file); err != nil {
			if err := writeAtomic(file, randomOpenings(seed, 500)); err != nil {
				return "", "", err
			}
		}
	}
	sum, err := filehash.SHA256(file)
	if err != nil {
		return "", "", fmt.Errorf("--openings: %v", err)
	}
	return given, sum, nil
}

// randomOpenings draws n openings of 8 random plies from the start
// position (none that ends the game), one EPD line each.
func randomOpenings(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x6f70656e))
	var sb strings.Builder
	for i := 0; i < n; {
		pos := engine.StartPosition()
		ok := true
		for ply := 0; ply < 8 && ok; ply++ {
			legal := pos.LegalMoves()
			if len(legal) == 0 {
				ok = false
				break
			}
			pos.MakeMove(legal[rng.IntN(len(legal))])
		}
		if ok && len(pos.LegalMoves()) > 0 {
			sb.WriteString(pos.FEN() + "\n")
			i++
		}
	}
	return []byte(sb.String())
}

// writeAtomic writes path whole or not at all.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err == nil {
		f.Sync()
		f.Close()
	}
	return os.Rename(tmp, path)
}
