package enginespec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// net= names a stored net (a hash or a prefix), the engine's default, or
// a file here; it goes with builtin or an engine that travels, never with
// the net option set by hand, and only in cluster tests.
func TestNetSpecs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "0123456789abcdef")
	if err := os.WriteFile(file, []byte("net"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in                   string
		net, netFile, netOpt string
	}{
		{"name=a,builtin,net=0123456789ABCDEF", "0123456789abcdef", "", ""},
		{"name=a,builtin,net=default", "default", "", ""},
		{"name=a,artifact=deadbeef00,net=" + file + ",net-option=NNUEFile", "", file, "NNUEFile"},
		{"name=a,upload=./x,net=./nets/big.nnue", "", "./nets/big.nnue", ""},
	} {
		s, err := Parse(c.in, Match)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s.Net != c.net || s.NetFile != c.netFile || s.NetOption != c.netOpt {
			t.Errorf("%s: net %q file %q option %q", c.in, s.Net, s.NetFile, s.NetOption)
		}
		back, err := Parse(s.String(), Match)
		if err != nil || back.Net != s.Net || back.NetFile != s.NetFile || back.NetOption != s.NetOption {
			t.Errorf("%s: round trip %q: %+v %v", c.in, s.String(), back, err)
		}
	}
	if p := (Spec{Name: "dev", Net: "default"}).NetProto(); p.GetSha256() != "default:dev" {
		t.Errorf("net=default on the wire: %q", p.GetSha256())
	}
	for _, c := range []struct{ in, want string }{
		{"name=a,cmd=stockfish,net=0123456789abcdef", "net= goes with builtin or an uploaded engine"},
		{"name=a,builtin,net-option=X", "net-option= goes with net="},
		{"name=a,builtin,net=0123456789abcdef,option.EvalFile=/x", "option.EvalFile and net= exclude each other"},
		{"name=a,artifact=deadbeef00,net=0123456789abcdef,net-option=NNUE,option.nnue=1", "option.NNUE and net= exclude each other"},
		{"name=a,builtin,net=", "empty value"},
		{"name=a,builtin,net=a,net=b", "given twice"},
	} {
		if _, err := Parse(c.in, Match); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := Parse("name=a,builtin,net=0123456789abcdef", LocalMatch); err == nil || !strings.Contains(err.Error(), "option.EvalFile=FILE") {
		t.Errorf("net= in a local match: %v", err)
	}
}
