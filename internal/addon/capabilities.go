package addon

import (
	"context"

	"github.com/clever-operator/clever-operator/internal/backups"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/configprovider"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/migrations"
	"github.com/clever-operator/clever-operator/internal/operatoraddons"
	"github.com/clever-operator/clever-operator/internal/step"
)

// capabilitiesOf is the one place where a kind's row becomes what the pass calls: where its
// Secret data comes from (a step.Source) and what it does beyond the generic pass (its
// step.Capability list, in the order the pass calls them). The pass tests no flag of the row.
func (r *Reconciler) capabilitiesOf(k *kinds.Kind) (step.Source, []step.Capability) {
	var src step.Source = envSource{}
	switch {
	case k.ConfigProvider:
		src = configprovider.Source{}
	case k.Operator != "":
		src = operatoraddons.Source{}
	}
	var caps []step.Capability
	if k.Migrations {
		caps = append(caps, migrations.Capability{Engine: engine{r}, Prices: migrations.Prices{Plans: r.Plans, Prices: r.Prices}})
	}
	if k.Operator != "" {
		caps = append(caps, operatoraddons.Capability{})
	}
	if k.Backups {
		caps = append(caps, backups.Capability{MaxAge: r.BackupMaxAge})
	}
	if k.JoinsNetworkGroups() {
		caps = append(caps, r.memberships())
	}
	return src, caps
}

// capabilities is the kind's source and capabilities, built from its row on first use.
func (r *Reconciler) capabilities() (step.Source, []step.Capability) {
	r.capsOnce.Do(func() { r.source, r.caps = r.capabilitiesOf(r.Kind) })
	return r.source, r.caps
}

// envSource is the engine's own source of Secret data: the add-on's env (GET …/env), pending
// while variables Clever Cloud announced are missing or it still shows a revoked key.
type envSource struct{}

func (envSource) Read(ctx context.Context, s step.Pass, addon *clevercloud.Addon, _ bool) (step.Read, error) {
	env, err := s.API().GetAddonEnv(ctx, s.Org(), addon.ID)
	if err != nil {
		return step.Read{}, err
	}
	data := clevercloud.EnvMap(env)
	if pending := pendingMessage(s.Kind(), s.Status(), addon.ID, addon.ConfigKeys, data); pending != "" {
		return step.Read{Pending: pending}, nil
	}
	return step.Read{Data: data}, nil
}

func (envSource) NeedsRealID() bool    { return false }
func (envSource) Waited() bool         { return true }
func (envSource) ReportsVersion() bool { return false }
