package cloudstack

import (
	"errors"
	"fmt"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// newBucket is the shared bucket of cfg's endpoint and API key, or nil
// when there is none to keep: no state directory, or api_rate_limit 0.
func (c *Client) newBucket(cfg config.CloudStack, rt *retryTransport) *bucket {
	if c.state == nil {
		if cfg.APIRateLimit != nil && *cfg.APIRateLimit > 0 {
			c.logger.Warn(logTag, "cloudstack.api_rate_limit is set but there is no state directory "+
				"(cloudstack.state_dir) to share it through: no bucket")
		}
		return nil
	}
	if cfg.APIRateLimit != nil && *cfg.APIRateLimit == 0 {
		return nil
	}
	// The bucket's own question goes around it.
	unmetered := &retryTransport{next: rt.next, retries: rt.retries, bound: rt.bound, logger: c.logger,
		clock: rt.clock, jitter: rt.jitter}
	return &bucket{state: c.state, key: stateKey(c.endpoint, cfg.APIKey), fixed: cfg.APIRateLimit,
		probe: c.limitProbe(newCS(cfg, unmetered), cfg.APIKey), clock: rt.clock, logger: c.logger}
}

// limitProbe asks listCapabilities for the API limit, which it reports
// while api.throttling.enabled is true (ManagementServerImpl.listCapabilities:
// apilimitinterval and apilimitmax), and whether the account is a root
// admin, which ApiRateLimitServiceImpl.checkAccess exempts.
func (c *Client) limitProbe(cs *csgo.CloudStackClient, apiKey string) limitProbe {
	return func() (float64, string, error) {
		resp, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
		if err != nil {
			return 0, "", c.fail("listCapabilities", err)
		}
		capab := resp.Capabilities
		if capab == nil || capab.Apilimitmax <= 0 || capab.Apilimitinterval <= 0 {
			return 0, "CloudStack's API throttle is off (listCapabilities reports no apilimitmax): no bucket", nil
		}
		limit := fmt.Sprintf("%d calls per %d s", capab.Apilimitmax, capab.Apilimitinterval)
		root, err := c.rootAdmin(cs, apiKey)
		if err != nil {
			return 0, "", err
		}
		if root {
			return 0, "the account is a root admin, which CloudStack's API throttle (" + limit + ") exempts: no bucket", nil
		}
		rate := limitShare * float64(capab.Apilimitmax) / float64(capab.Apilimitinterval)
		return rate, fmt.Sprintf("%.4g requests/s, %.0f %% of CloudStack's API limit of %s (listCapabilities)",
			rate, limitShare*100, limit), nil
	}
}

// rootAdmin says the caller is a root admin: getUser, which only the Admin
// role type may call (GetUserCmd's authorized), answers its own user with
// its role type. A refusal is an answer: not a root admin.
func (c *Client) rootAdmin(cs *csgo.CloudStackClient, apiKey string) (bool, error) {
	p := &csgo.CustomServiceParams{}
	p.SetParam("userapikey", apiKey)
	var u struct {
		User struct {
			RoleType    string `json:"roletype"`
			AccountType int    `json:"accounttype"`
		} `json:"user"`
	}
	custom, _ := cs.Custom.(*csgo.CustomService)
	err := c.fail("getUser", custom.CustomRequest("getUser", p, &u))
	var api *APIError
	var refused *CredentialsRefusedError
	switch {
	case errors.As(err, &api), errors.As(err, &refused):
		return false, nil
	case err != nil:
		return false, err
	}
	if u.User.RoleType != "" {
		return u.User.RoleType == "Admin", nil
	}
	return u.User.AccountType == 1, nil
}
