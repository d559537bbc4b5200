package operator

import (
	"time"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
)

// ClientOptions are the client settings that do not come from the configuration.
type ClientOptions struct {
	RateLimit float64       // requests/s per credential set; 0 = client default
	Timeout   time.Duration // per attempt; 0 = client default
	Metrics   *clevercloud.Metrics
	// MaxRetries: 0 = client default, negative = no retry.
	MaxRetries int
}

// Credentials converts a configuration into the client's credentials: the bearer token
// in bearer mode, else token and secret with the configured consumer pair, or
// clever-tools' published one when none is configured.
func Credentials(c config.APIConfig) clevercloud.Credentials {
	if c.Mode() == config.ModeBearer {
		return clevercloud.Credentials{BearerToken: c.Bearer()}
	}
	key, secret, _ := c.Consumer()
	return clevercloud.Credentials{ConsumerKey: key, ConsumerSecret: secret, Token: c.Token, Secret: c.Secret}
}

// NewAPIClient builds the client of one configuration, global or per namespace: bearer
// tokens go to the bridge and OAuth1 to the API endpoint (config.APIConfig.RequestEndpoint).
// main's --check and the engine use it, so --check proves what the engine will do.
func NewAPIClient(c config.APIConfig, o ClientOptions) (*clevercloud.Client, error) {
	return clevercloud.New(clevercloud.Config{
		Endpoint:    c.RequestEndpoint(),
		Credentials: Credentials(c),
		RateLimit:   o.RateLimit,
		Timeout:     o.Timeout,
		Metrics:     o.Metrics,
		MaxRetries:  o.MaxRetries,
	})
}
