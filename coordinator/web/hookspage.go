package web

import (
	"context"
	"net/http"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// The webhooks page (/hooks): a signed-in user's webhooks (an admin's:
// all) and their latest deliveries with status, as arbiter hook list and
// arbiter hook deliveries print them.

// HookSource is what the page reads (hooks.Manager).
type HookSource interface {
	List(id identity.Identity) ([]store.Hook, error)
	Deliveries(ctx context.Context, id identity.Identity, hookID string, limit int) ([]*store.Delivery, error)
}

func init() {
	RegisterPage(Page{Name: "hooks", Pattern: "GET /hooks", Render: func(p *PageRequest) error { return p.s.hooksPage(p.R, p.v) }})
}

// maxDeliveriesShown bounds the deliveries the page lists.
const maxDeliveriesShown = 200

type hooksData struct {
	Hooks      []store.Hook
	Deliveries []*store.Delivery
}

func (s *Server) hooksPage(r *http.Request, v *view) error {
	v.Title, v.Nav, v.tmpl = "Webhooks", "hooks", "hooks"
	if !v.Viewer.CanSubmit() {
		return apierr.New(apierr.Unauthenticated, apierr.ReasonBadCredential, "webhooks are shown to their owners: sign in with a client or admin credential")
	}
	if s.cfg.Hooks == nil {
		return apierr.New(apierr.NotFound, apierr.ReasonBadInput, "this coordinator sends no webhooks")
	}
	id := v.Viewer.identity()
	d := &hooksData{}
	var err error
	if d.Hooks, err = s.cfg.Hooks.List(id); err != nil {
		return err
	}
	if d.Deliveries, err = s.cfg.Hooks.Deliveries(r.Context(), id, "", maxDeliveriesShown); err != nil {
		return err
	}
	v.Page = d
	return nil
}
