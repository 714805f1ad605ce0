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
