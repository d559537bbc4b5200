package addon

import (
	"context"
	"fmt"
	"strings"

	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// options returns the options to create the add-on with (or migrate it to) for planID:
//   - on a shared plan (DEV, free) the version and encryption are left out: Clever Cloud
//     ignores them there (the version is the shared cluster's), so asking would only fail or
//     report drift that is not;
//   - otherwise the version code is matched against the versions the provider announces at
//     GET /v4/addon-providers/{id} (cached): a version it does not announce is a SpecError
//     (reason VersionNotAvailable) naming those it does. No version list is built into the
//     operator or its CRDs. A provider that announces nothing is sent the code as formatted
//     by the kind; the API then validates it (a refusal is reported with its message).
//
// creating: the options are for a create (a migration uses only the version, and never
// refuses the dedicated-only options the add-on was created with).
func (r *Reconciler) options(ctx context.Context, s step.Pass, planID string, creating bool) (clevercloud.Options, error) {
	api, key, org := s.API(), s.Key(), s.Org()
	o, err := r.Kind.Options(s.Object())
	if err != nil || r.Kind.VersionCode == nil {
		return o, err
	}
	if pl, ok := r.Plans.Plan(ctx, api, key, org, r.Kind.ProviderID, planID); ok && catalog.SharedPlan(pl) {
		o.Version, o.Encryption = "", ""
		if !creating {
			return o, nil
		}
		return o, r.Kind.DropDedicatedOptions(&o, pl.Slug)
	}
	info, err := r.Plans.ProviderInfo(ctx, api, key, r.Kind.ProviderID)
	if err != nil {
		if clevercloud.IsRetryable(err) || clevercloud.IsThrottled(err) {
			return o, err
		}
		return o, nil
	}
	v, err := matchVersion(r.Kind, o.Version, info)
	o.Version = v
	return o, err
}

// matchVersion finds the announced version whose digits are the spec's code ("8.4" for 84,
// "7.2.4" for 724, "17" for 17).
func matchVersion(k *kinds.Kind, want string, info *clevercloud.ProviderInfo) (string, error) {
	announced := info.Versions()
	if len(announced) == 0 || want == "" {
		return want, nil
	}
	code, _ := kinds.VersionCodeOf(want)
	codes := make([]string, 0, len(announced))
	for _, a := range announced {
		c, ok := kinds.VersionCodeOf(a)
		if ok && c == code {
			return a, nil
		}
		if ok {
			codes = append(codes, fmt.Sprintf("%d (%s)", c, a))
		} else {
			codes = append(codes, a)
		}
	}
	return want, &kinds.SpecError{Reason: status.ReasonVersionNotAvailable, Msg: fmt.Sprintf(
		"spec.options.version %d (%s) is not offered by Clever Cloud for %s; available: %s (as announced by GET /v4/addon-providers/%s)",
		code, want, k.ProviderID, strings.Join(codes, ", "), k.ProviderID)}
}

// sharedPlanApplied says whether the add-on's plan (status.plan) is a shared one, whose
// version and encryption Clever Cloud does not take from the spec: no VersionDrift is
// reported for it.
func (r *Reconciler) sharedPlanApplied(ctx context.Context, s *pass) bool {
	planID := s.st.Plan
	if planID == "" || r.Plans == nil {
		return false
	}
	pl, ok := r.Plans.Plan(ctx, s.api, s.key, s.org, r.Kind.ProviderID, planID)
	return ok && catalog.SharedPlan(pl)
}

// specErrorReason is the condition reason of a SpecError (InvalidSpec unless it names one).
func specErrorReason(se *kinds.SpecError, def string) string {
	if se.Reason != "" {
		return se.Reason
	}
	return def
}
