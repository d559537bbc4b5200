package wire

import "slices"

// ---- deep copies (callers may mutate what they get) ----

// CloneFeatures returns a deep copy of a plan's features.
func CloneFeatures(in []PlanFeature) []PlanFeature {
	out := make([]PlanFeature, len(in))
	for i, f := range in {
		out[i] = f
		if f.ComputableValue != nil {
			out[i].ComputableValue = strp(*f.ComputableValue)
		}
		if f.NameCode != nil {
			out[i].NameCode = strp(*f.NameCode)
		}
	}
	return out
}

// ClonePlan returns a deep copy of pl (nil zones become []).
func ClonePlan(pl Plan) Plan {
	out := pl
	if pl.PriceID != nil {
		out.PriceID = strp(*pl.PriceID)
	}
	out.Features = CloneFeatures(pl.Features)
	out.Zones = NonNil(slices.Clone(pl.Zones))
	return out
}

// CloneProvider returns a deep copy of pr, with its plans when withPlans
// (else with an empty plan list).
func CloneProvider(pr Provider, withPlans bool) Provider {
	out := pr
	out.Regions = NonNil(slices.Clone(pr.Regions))
	out.Plans = []Plan{}
	if withPlans {
		for _, pl := range pr.Plans {
			out.Plans = append(out.Plans, ClonePlan(pl))
		}
	}
	out.Features = []ProviderFeatureView{}
	for _, f := range pr.Features {
		if f.NameCode != nil {
			f.NameCode = strp(*f.NameCode)
		}
		out.Features = append(out.Features, f)
	}
	return out
}

// AddonProviderOf is the provider as Addon.provider shows it (no plans, no features).
func AddonProviderOf(pr Provider) AddonProvider {
	out := pr.AddonProvider
	out.Regions = NonNil(slices.Clone(pr.Regions))
	return out
}

// CloneAddon returns a deep copy of a.
func CloneAddon(a Addon) Addon {
	out := a
	if a.Name != nil {
		out.Name = strp(*a.Name)
	}
	out.Provider.Regions = NonNil(slices.Clone(a.Provider.Regions))
	out.Plan = ClonePlan(a.Plan)
	out.ConfigKeys = NonNil(slices.Clone(a.ConfigKeys))
	return out
}

// NonNil returns s, or an empty slice when s is nil (so that it encodes as
// [] rather than null).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func strp(s string) *string { return &s }
