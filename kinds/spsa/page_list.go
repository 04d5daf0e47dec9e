package spsa

import (
	"embed"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The tunes' table on the list of work (/ and /users/{name}): each tune
// of the list's page with its engine, its parameters now, its time
// control, its updates applied and its games, newest first.

//go:embed templates/tunes.html
var listTemplates embed.FS

func init() {
	web.RegisterListSection(web.ListSection{Name: "tunes", Templates: listTemplates, Family: jobkind.FamilyTune, Order: 30})
}
