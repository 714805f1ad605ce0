package network

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Provides is NetworkModelImpl.areServicesSupportedByNetworkOffering
// for one service: the network's offering lists it.
func Provides(st *model.State, n *model.Network, service string) bool {
	o := st.NetworkOffering(n.OfferingID)
	if o == nil {
		return false
	}
	_, ok := o.Services[service]
	return ok
}
