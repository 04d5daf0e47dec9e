package perft

import (
	"embed"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The perft jobs' table on the list of work (/ and /users/{name}): each
// job of the list's page with its FEN, depth, units done, nodes, speed
// and verified units, newest first. It is shown empty too ("No perft
// jobs."), as it was when the list held it.

//go:embed templates/perfts.html
var listTemplates embed.FS

func init() {
	web.RegisterListSection(web.ListSection{Name: "perfts", Templates: listTemplates, Family: jobkind.FamilyPerft, Order: 20, ShowEmpty: true})
}
