package simulator

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// csInsufficientServerCap is InsufficientServerCapacityException's
// cserrorcode.
const csInsufficientServerCap = 4335

func init() {
	for name, kind := range map[string]string{
		"volumeid":            model.KindVolume,
		"affinitygroupid":     model.KindAffinityGroup,
		"securitygroupid":     model.KindSecurityGroup,
		"ipaddressid":         model.KindPublicIP,
		"associatednetworkid": model.KindNetwork,
	} {
		kernel.ParamKinds[name] = kind
	}
}

// addOwner adds the account and domain fields every owned entity's response
// carries.
func addOwner(c *kernel.Call, v map[string]any, accountID string) {
	a := c.State.Account(accountID)
	if a == nil {
		return
	}
	v["account"] = a.Name
	if d := c.State.Domain(a.DomainID); d != nil {
		v["domainid"], v["domain"], v["domainpath"] = d.ID, d.Name, d.DisplayPath()
	}
}
