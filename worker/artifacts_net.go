package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/engine/nnue"
	"github.com/arbiter-chess/arbiter/engine/search"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// netCheckName is the engine name under which a worker reports its steps
// with an engine's net.
func netCheckName(engine string) string { return engine + " net" }

// prepareNet fetches engine e's net into the cache (checking its hash)
// and, for the embedded engine, loads it as the engine would: a file it
// would refuse (truncated, foreign, another architecture) is a refusal
// of the test. It returns the net's file.
func (c *artifactCache) prepareNet(ctx context.Context, e *arbiterv1.EngineSpec, report reportFunc) (string, error) {
	n := e.GetNet()
	if !validHash(n.GetSha256()) {
		return "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
			detail: fmt.Sprintf("net %q: not a SHA-256", n.GetSha256())}
	}
	obj, fromCache, err := c.fetch(ctx, n.GetSha256(), n.GetSize())
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			r.net = true
			r.detail = "net " + strings.TrimPrefix(r.detail, "artifact ")
		}
		return "", err
	}
	source := "download"
	if fromCache {
		source = "cache"
	}
	c.m.downloads.WithLabelValues(source).Inc()
	report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_FETCHED, source, "", 0)
	touch(obj)
	if matchspec.IsBuiltin(e) {
		if err := checkBuiltinNet(obj); err != nil {
			return "", &refusal{state: arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_REFUSED, net: true,
				detail: fmt.Sprintf("engine %q rejects net %s: %v", e.GetName(), n.GetSha256()[:12], err)}
		}
		report(arbiterv1.ArtifactCheckState_ARTIFACT_CHECK_STATE_VERIFIED, "the engine loaded it", "", 0)
	}
	return obj, nil
}

// checkBuiltinNet loads a net as the embedded engine's EvalFile does: the
// size first (a wrong file may be huge), then the layout.
func checkBuiltinNet(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := nnue.CheckSize(st.Size()); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = nnue.Load(data)
	return err
}

// withNet is engine e as the match runner starts it: its net's path in
// the net option (and, for the embedded engine, UseNNUE on unless the
// test sets it), the net reference itself dropped.
func withNet(e *arbiterv1.EngineSpec, net string) *arbiterv1.EngineSpec {
	spec := proto.Clone(e).(*arbiterv1.EngineSpec)
	if net == "" {
		return spec
	}
	if spec.Options == nil {
		spec.Options = map[string]string{}
	}
	spec.Options[matchspec.NetOption(e.GetNet())] = net
	if matchspec.IsBuiltin(e) {
		set := false
		for k := range spec.Options {
			set = set || strings.EqualFold(k, search.OptUseNNUE)
		}
		if !set {
			spec.Options[search.OptUseNNUE] = "true"
		}
	}
	spec.Net = nil
	return spec
}
