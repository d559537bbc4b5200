package clevercloud

import (
	"time"

	"github.com/clever-operator/clever-operator/internal/config"
)

// ClientOptions are the client settings that do not come from the configuration.
type ClientOptions struct {
	RateLimit float64       // requests/s per credential set; 0 = client default
	Timeout   time.Duration // per attempt; 0 = client default
	Metrics   *Metrics
	// MaxRetries: 0 = client default, negative = no retry.
	MaxRetries int
}

// CredentialsOf converts a configuration into the client's credentials: the bearer token
// in bearer mode, else token and secret with the configured consumer pair, or
// clever-tools' published one when none is configured.
func CredentialsOf(c config.APIConfig) Credentials {
	if c.Mode() == config.ModeBearer {
		return Credentials{BearerToken: c.Bearer()}
	}
	key, secret, _ := c.Consumer()
	return Credentials{ConsumerKey: key, ConsumerSecret: secret, Token: c.Token, Secret: c.Secret}
}

// NewFromConfig builds the client of one configuration, global or per namespace: bearer
// tokens go to the bridge and OAuth1 to the API endpoint (config.APIConfig.RequestEndpoint).
// The operator's engine, its --check and the kubectl plugin's import all use it, so --check
// proves what the engine will do.
func NewFromConfig(c config.APIConfig, o ClientOptions) (*Client, error) {
	return New(Config{
		Endpoint:    c.RequestEndpoint(),
		Credentials: CredentialsOf(c),
		RateLimit:   o.RateLimit,
		Timeout:     o.Timeout,
		Metrics:     o.Metrics,
		MaxRetries:  o.MaxRetries,
	})
}
