// Package configprovider is the configuration provider kind's source of Secret data: its
// spec.variables, pushed to the add-on when they differ from what it holds.
package configprovider

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// Source is a configuration provider's step.Source: spec.variables, pushed to the add-on when
// they differ from what it holds, are the Secret data (what it holds, without a write, when
// the resource only observes it or is paused).
type Source struct{}

func (Source) Read(ctx context.Context, s step.Pass, addon *clevercloud.Addon, created bool) (step.Read, error) {
	api := s.API()
	want := s.Kind().Variables(s.Object())
	var have []clevercloud.Variable
	if !created {
		// A configuration provider created in this pass holds no variables: no read.
		var err error
		if have, err = api.GetConfigProviderEnv(ctx, addon.RealID); err != nil {
			return step.Read{}, err
		}
	}
	if s.ObserveOnly() || s.Paused() {
		// No write: publish what the add-on holds.
		return step.Read{Data: clevercloud.EnvMap(have)}, nil
	}
	if !sameVariables(have, want) {
		if _, err := api.PutConfigProviderEnv(ctx, addon.RealID, toVariables(want)); err != nil {
			return step.Read{}, err
		}
		s.Event(corev1.EventTypeNormal, status.EventVariablesPushed, fmt.Sprintf("Pushed %d variables to configuration provider %s", len(want), addon.ID))
	}
	return step.Read{Data: want}, nil
}

func (Source) NeedsRealID() bool    { return true }
func (Source) Waited() bool         { return false }
func (Source) ReportsVersion() bool { return false }

func sameVariables(have []clevercloud.Variable, want map[string]string) bool {
	if len(have) != len(want) {
		return false
	}
	for _, v := range have {
		if w, ok := want[v.Name]; !ok || w != v.Value {
			return false
		}
	}
	return true
}

func toVariables(m map[string]string) []clevercloud.Variable {
	out := make([]clevercloud.Variable, 0, len(m))
	for k, v := range m {
		out = append(out, clevercloud.Variable{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
