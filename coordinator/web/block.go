package web

import (
	"net/http"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// resultBlock is a test's or tune's result block in both layouts, as
// `arbiter status JOB --block` prints it, ending with the page's address.
type resultBlock struct {
	OpenBench, Fishtest string
	Final               bool
}

func blockOf(r *http.Request, j *arbiterv1.Job) resultBlock {
	return resultBlock{OpenBench: jobreport.Block(j, jobreport.BlockOpenBench, pageURL(r)),
		Fishtest: jobreport.Block(j, jobreport.BlockFishtest, pageURL(r)),
		Final:    j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING}
}

// pageURL is the address the viewer reached this page at (the coordinator
// does not know its public name; the viewer's browser does). The live
// region's ?live=1 is left out.
func pageURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.Path
}
