package test

import (
	"embed"

	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// The tests' table on the list of work (/ and /users/{name}): each match
// and SPRT test of the list's page with its engines, time control, games,
// pentanomial counts, Elo and LLR, newest first. It is the first table
// (Order 10) and is shown empty too ("No tests."), as it was when the
// list held it.

//go:embed templates/tests.html
var listTemplates embed.FS

func init() {
	web.RegisterListSection(web.ListSection{Name: "tests", Templates: listTemplates, Family: jobkind.FamilyTest, Order: 10, ShowEmpty: true})
}
