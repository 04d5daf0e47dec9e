package datagen

import "github.com/arbiter-chess/arbiter/worker"

// The worker plays a batch with the settings this kind converts it to.
// Until the worker's runner registry takes this kind's whole runner (a
// file of its own here), the worker asks for the conversion through this
// one hook.
func init() { worker.DatagenBatchSettings = BatchSettings }
