package kinds

// usageBilled are the providers billed by use rather than by plan (Cellar: storage and
// traffic per GB, the price system's countable services).
var usageBilled = map[string]bool{"cellar-addon": true}

// UsageBilled says whether Clever Cloud bills add-ons of provider by use rather than by plan.
func UsageBilled(provider string) bool { return usageBilled[provider] }
