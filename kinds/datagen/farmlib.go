package datagen

// DATAGEN for programs that drive a farm (the net loop, local/netloop):
// the spec `arbiter submit datagen` builds from its flags, its submission
// with the engine's and the net's uploads, and the pull of `arbiter
// datagen pull`, the same code as those commands.

import (
	"context"
	"io"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// SubmitSpec is the dataset `arbiter submit datagen --engine ENGINE
// --each EACH --positions N --random-seed SEED` submits, its other flags
// at their defaults, with the engine as parsed (for Submit's uploads).
// Errors name the flag.
func SubmitSpec(engine, each string, positions int, seed uint64) (*arbiterv1.DatagenSpec, enginespec.Spec, error) {
	sf := submitFlags{engine: engine, throughput: 1, f: datagenFlags{positions: positions, each: each, randomPlies: "8-9",
		randomSeed: seed, adjudicate: defaultAdjudicate, filters: defaultDatagenFilters, format: "text", farm: true}}
	spec, es, _, err := sf.spec()
	return spec, es, err
}

// Submit uploads what es names (upload=, source=, net=FILE), putting
// their hashes in spec, submits the dataset and returns its job id.
// progress gets the uploads' lines.
func Submit(ctx context.Context, c *clusterclient.Client, spec *arbiterv1.DatagenSpec, es enginespec.Spec, progress io.Writer) (string, error) {
	if err := artifactclient.UploadEngine(ctx, c.Conn(), es, spec.Engine, progress); err != nil {
		return "", cliexit.Call(c, "upload", err)
	}
	j, err := clicmd.SubmitJob(ctx, c, Kind, spec)
	if err != nil {
		return "", err
	}
	return j.GetJobId(), nil
}

// Pull writes dataset jobID's records to the new file out in format f,
// as `arbiter datagen pull` does, and its summary line to stdout.
func Pull(ctx context.Context, c *clusterclient.Client, jobID, out string, f dg.Format, stdout io.Writer) error {
	return pullDataset(ctx, stdout, c, jobID, out, f, false, 0, false, newShardProgress(io.Discard, false))
}
