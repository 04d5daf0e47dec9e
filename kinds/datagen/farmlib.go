package datagen

// DATAGEN's client side for programs above the kinds (the net loop on a
// farm, local/netloop), registered in client/datagenclient: the spec
// `arbiter submit datagen` builds from its flags, its submission with
// the engine's and the net's uploads, and the pull of `arbiter datagen
// pull`, the same code as those commands.

import (
	"context"
	"io"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/datagenclient"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func init() { datagenclient.Register(datasets{}) }

// datasets implements datagenclient.Datasets.
type datasets struct{}

func (datasets) Submit(ctx context.Context, c *clusterclient.Client, engine, each string, positions int, seed uint64, progress io.Writer) (string, error) {
	sf := submitFlags{engine: engine, throughput: 1, f: datagenFlags{positions: positions, each: each, randomPlies: "8-9",
		randomSeed: seed, adjudicate: defaultAdjudicate, filters: defaultDatagenFilters, format: "text", farm: true}}
	spec, es, _, err := sf.spec()
	if err != nil {
		return "", err
	}
	if err := artifactclient.UploadEngine(ctx, c.Conn(), es, spec.Engine, progress); err != nil {
		return "", cliexit.Call(c, "upload", err)
	}
	j, err := clicmd.SubmitJob(ctx, c, Kind, spec)
	if err != nil {
		return "", err
	}
	return j.GetJobId(), nil
}

func (datasets) PullText(ctx context.Context, c *clusterclient.Client, jobID, out string) error {
	return pullDataset(ctx, io.Discard, c, jobID, out, dg.FormatText, false, 0, false, newShardProgress(io.Discard, false))
}

func (datasets) Of(j *arbiterv1.Job) *arbiterv1.DatagenJob { return DatagenOf(j) }
