package clevercloud

// JSON shapes of the Clever Cloud API as the operator uses them
// (../shared/docs/clever-cloud-api.md §4.5). Field order and names are the wire contract;
// both the client and the fake server (internal/fakeapi) use these types.

// Provider is an add-on provider (GET /v2/products/addonproviders items, Addon.provider).
type Provider struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Website        string   `json:"website"`
	SupportEmail   string   `json:"supportEmail"`
	GooglePlusName string   `json:"googlePlusName"`
	TwitterName    string   `json:"twitterName"`
	AnalyticsID    string   `json:"analyticsId"`
	ShortDesc      string   `json:"shortDesc"`
	LongDesc       string   `json:"longDesc"`
	LogoURL        string   `json:"logoUrl"`
	Status         string   `json:"status"`
	OpenInNewTab   bool     `json:"openInNewTab"`
	CanUpgrade     bool     `json:"canUpgrade"`
	Regions        []string `json:"regions"`
	Plans          []Plan   `json:"plans"`
}

// Plan is one plan of a provider.
type Plan struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Slug     string        `json:"slug"`
	Price    float32       `json:"price"`
	PriceID  *string       `json:"price_id"`
	Features []PlanFeature `json:"features"`
	Zones    []string      `json:"zones"`
}

// PlanFeature describes one feature of a plan.
type PlanFeature struct {
	Name            string  `json:"name"`
	Type            string  `json:"type"`
	Value           string  `json:"value"`
	ComputableValue *string `json:"computable_value"`
	NameCode        *string `json:"name_code"`
}

// Addon is an add-on instance (GET/POST /v2/organisations/{owner}/addons...).
type Addon struct {
	ID           string   `json:"id"`
	Name         *string  `json:"name"`
	RealID       string   `json:"realId"`
	Region       string   `json:"region"`
	Provider     Provider `json:"provider"`
	Plan         Plan     `json:"plan"`
	CreationDate uint64   `json:"creationDate"`
	ConfigKeys   []string `json:"configKeys"`
}

// AddonName returns the add-on's name, or "" when it has none.
func (a *Addon) AddonName() string {
	if a.Name == nil {
		return ""
	}
	return *a.Name
}

// CreateOpts is the body of POST /v2/organisations/{owner}/addons.
type CreateOpts struct {
	Name       string  `json:"name"`
	Region     string  `json:"region"`
	ProviderID string  `json:"providerId"`
	Plan       string  `json:"plan"`
	Options    Options `json:"options"`
}

// Options are the create options; every key is omitted when empty.
type Options struct {
	Version    string `json:"version,omitempty"`
	Encryption string `json:"encryption,omitempty"`
	// Services holds a JSON document as a string (ElasticSearch kibana/apm).
	Services string `json:"services,omitempty"`
}

// Variable is one environment variable of an add-on.
type Variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Self is the current user (GET /v2/self).
type Self struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Email          string   `json:"email"`
	Phone          string   `json:"phone"`
	Address        string   `json:"address"`
	City           string   `json:"city"`
	Zipcode        string   `json:"zipcode"`
	Country        string   `json:"country"`
	Avatar         string   `json:"avatar"`
	CreationDate   uint64   `json:"creationDate"`
	Lang           string   `json:"lang"`
	EmailValidated bool     `json:"emailValidated"`
	OauthApps      []string `json:"oauthApps"`
	Admin          bool     `json:"admin"`
	CanPay         bool     `json:"canPay"`
	PreferredMFA   string   `json:"preferredMFA"`
	HasPassword    bool     `json:"hasPassword"`
}

// ErrorBody is the JSON body of every non-2xx answer.
// ID is signed: the API answers -500 for provider errors (clever-cloud-api-more.md §6.2).
type ErrorBody struct {
	ID      int64             `json:"id"`
	Message string            `json:"message"`
	Type    string            `json:"type"`
	Fields  map[string]string `json:"fields,omitempty"`
}
