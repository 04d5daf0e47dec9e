package matchplan

import (
	"fmt"
	"strconv"

	"github.com/arbiter-chess/arbiter/sprt"
)

// StopUsage is the grammar of --stop, the same on `arbiter match`,
// `arbiter up` and `arbiter submit sprt|match`.
const StopUsage = "precision=ELO: end the test once its anytime-valid 95% Elo interval is narrower than ELO Elo (e.g. precision=10)"

// ParseStop reads a --stop value into the precision in Elo (0 for none).
func ParseStop(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	kv, err := parseKV("--stop", s)
	if err != nil {
		return 0, err
	}
	var precision float64
	for _, p := range kv {
		switch p[0] {
		case "precision":
			v, err := strconv.ParseFloat(p[1], 64)
			if err != nil {
				return 0, fmt.Errorf("--stop precision=%s: not a number of Elo", clip(p[1]))
			}
			if err := sprt.CheckPrecision("--stop precision", v); err != nil {
				return 0, err
			}
			precision = v
		default:
			return 0, unknownKey("--stop", p[0], "precision")
		}
	}
	return precision, nil
}
