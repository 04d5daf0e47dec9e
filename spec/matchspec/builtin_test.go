package matchspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// TestCheckBuiltinOptionsNet: a net given as EvalFile is checked (loaded)
// before a match starts, and UseNNUE is checked with the EvalFile beside it.
func TestCheckBuiltinOptionsNet(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "net.nnue")
	data, _ := nnue.NewRandom(1).MarshalBinary()
	os.WriteFile(good, data, 0o644)
	bad := filepath.Join(dir, "bad.nnue")
	os.WriteFile(bad, data[:5000], 0o644)

	if err := CheckBuiltinOptions("dev", map[string]string{"EvalFile": good, "UseNNUE": "true"}); err != nil {
		t.Fatalf("a good net: %v", err)
	}
	err := CheckBuiltinOptions("dev", map[string]string{"EvalFile": bad, "UseNNUE": "true"})
	if err == nil || !strings.Contains(err.Error(), `engine "dev"`) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "5000 bytes") {
		t.Fatalf("a truncated net: %v", err)
	}
	if def, _ := nnue.DefaultNet(); def == nil {
		if err := CheckBuiltinOptions("dev", map[string]string{"UseNNUE": "true"}); err == nil || !strings.Contains(err.Error(), "no net") {
			t.Fatalf("UseNNUE without a net: %v", err)
		}
	}
}
