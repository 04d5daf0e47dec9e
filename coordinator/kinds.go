package coordinator

// The job kinds that plug in through package workload: one blank import
// each registers the kind (its workload, schema, page and report).
import (
	_ "github.com/arbiter-chess/arbiter/coordinator/datagenjob"
)
