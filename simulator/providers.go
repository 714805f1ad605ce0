package simulator

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "listNetworkServiceProviders", idKind: kindProvider, sync: listNetworkServiceProviders},
		command{name: "updateNetworkServiceProvider", idKind: kindProvider, async: updateNetworkServiceProvider},
		command{name: "listVirtualRouterElements", idKind: kindVRElement, sync: listVirtualRouterElements},
		command{name: "configureVirtualRouterElement", idKind: kindVRElement, async: configureVirtualRouterElement},
		command{name: "listInternalLoadBalancerElements", idKind: kindVRElement, sync: listInternalLoadBalancerElements},
		command{name: "configureInternalLoadBalancerElement", idKind: kindVRElement, async: configureInternalLoadBalancerElement},
	)
}

// listNetworkServiceProviders is NetworkServiceImpl.listNetworkServiceProviders:
// name and state match whole (case-insensitively, as MySQL compares them) and
// the newest provider comes first.
func listNetworkServiceProviders(c *Call) (any, error) {
	l := lister[*model.NetworkServiceProvider]{key: "networkserviceprovider", id: (*model.NetworkServiceProvider).UUID,
		view: plainView(providerView)}
	p := c.Params
	rows := slices.Clone(c.st.Providers)
	slices.Reverse(rows)
	return l.run(c, rows, func(n *model.NetworkServiceProvider) bool {
		return optEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			optEq(p.Get("name"), n.Name) && optEq(p.Get("state"), n.State)
	})
}

// providerView is ApiResponseHelper.createNetworkServiceProviderResponse.
func providerView(n *model.NetworkServiceProvider) map[string]any {
	return map[string]any{"id": n.ID, "name": n.Name, "physicalnetworkid": n.PhysicalNetworkID, "state": n.State,
		"canenableindividualservice": n.Name == "VirtualRouter" || n.Name == "VpcVirtualRouter",
		"servicelist":                providerServices(n.Name)}
}

// providerServices are the services of the providers' elements'
// getCapabilities, for the providers the simulator's offerings use.
func providerServices(name string) []string {
	switch name {
	case "VirtualRouter":
		return []string{"Vpn", "Dhcp", "Dns", "Gateway", "Firewall", "Lb", "SourceNat", "StaticNat", "PortForwarding", "UserData"}
	case "VpcVirtualRouter":
		return []string{"Vpn", "Dhcp", "Dns", "Gateway", "Lb", "SourceNat", "StaticNat", "PortForwarding", "UserData", "NetworkACL"}
	case "ConfigDrive":
		return []string{"UserData"}
	case "SecurityGroupProvider":
		return []string{"SecurityGroup"}
	}
	return []string{}
}

// updateNetworkServiceProvider follows NetworkServiceImpl.updateNetworkServiceProvider:
// enabling needs the element ready (VirtualRouterElement.isReady: its
// element configured enabled); Shutdown cannot be set.
func updateNetworkServiceProvider(c *Call) (*asyncJob, error) {
	p := c.Params
	nsp, _ := model.ByID(c.st.Providers, p.Get("id"))
	state := p.Get("state")
	switch state {
	case "", model.ProviderEnabled, model.ProviderDisabled:
	case model.ProviderShutdown:
		return nil, paramError("Updating the provider state to 'Shutdown' is not supported")
	default:
		return nil, paramError("Unable to resolve state '%s' to a supported value {Enabled or Disabled}", state)
	}
	if p.Has("servicelist") && nsp.Name != "VirtualRouter" && nsp.Name != "VpcVirtualRouter" {
		return nil, paramError("Cannot update set of Services for this Service Provider '%s'", nsp.Name)
	}
	return &asyncJob{instanceType: "PhysicalNetworkServiceProvider", instanceID: nsp.ID,
		cmdClass: "org.apache.cloudstack.api.command.admin.network.UpdateNetworkServiceProviderCmd",
		run: func() (any, error) {
			if err := setProviderState(c.st, nsp, state); err != nil {
				return nil, err
			}
			return map[string]any{"networkserviceprovider": providerView(nsp)}, nil
		}}, nil
}

// setProviderState applies a checked state; enabling needs the provider
// ready.
func setProviderState(st *model.State, nsp *model.NetworkServiceProvider, state string) *APIError {
	if state == model.ProviderEnabled && !providerReady(st, nsp) {
		return internalError("Provider is not ready, cannot Enable the provider, please configure the provider first")
	}
	if state != "" {
		nsp.State = state
	}
	return nil
}

// providerReady is the element's isReady: virtual routers and internal load
// balancers need their element enabled (VirtualRouterElement.isReady,
// InternalLoadBalancerElement.isReady); the simulator's other providers are
// always ready.
func providerReady(st *model.State, nsp *model.NetworkServiceProvider) bool {
	if e := vrElementOf(st, nsp.ID); e != nil {
		return e.Enabled
	}
	return true
}

func vrElementOf(st *model.State, nspID string) *model.VirtualRouterElement {
	for _, e := range st.VRElements {
		if e.NSPID == nspID {
			return e
		}
	}
	return nil
}

// listVirtualRouterElements lists the virtual routers' elements; the
// internal load balancers' share the table but have their own command.
func listVirtualRouterElements(c *Call) (any, error) {
	return c.listElements("virtualrouterelement", func(e *model.VirtualRouterElement) bool { return e.Type != "InternalLbVm" })
}

// listInternalLoadBalancerElements is
// InternalLoadBalancerElement.searchForInternalLoadBalancerElements: only
// InternalLbVm elements.
func listInternalLoadBalancerElements(c *Call) (any, error) {
	return c.listElements("internalloadbalancerelement", func(e *model.VirtualRouterElement) bool { return e.Type == "InternalLbVm" })
}

func (c *Call) listElements(key string, ofType func(*model.VirtualRouterElement) bool) (any, error) {
	l := lister[*model.VirtualRouterElement]{key: key, id: (*model.VirtualRouterElement).UUID, view: (*Call).vrElementView}
	p := c.Params
	return l.run(c, c.st.VRElements, ofType, func(e *model.VirtualRouterElement) bool {
		return optEq(p.Get("nspid"), e.NSPID) && (!p.Has("enabled") || p.Bool("enabled", false) == e.Enabled)
	})
}

// vrElementView is ApiResponseHelper.createVirtualRouterProviderResponse.
func (c *Call) vrElementView(e *model.VirtualRouterElement) map[string]any {
	root := c.st.Domains[0]
	admin := c.st.Accounts[0]
	return map[string]any{"id": e.ID, "nspid": e.NSPID, "enabled": e.Enabled, "account": admin.Name,
		"domainid": root.ID, "domain": root.Name, "domainpath": root.DisplayPath()}
}

// configureVirtualRouterElement is VirtualRouterElement.configure: it sets
// the element's enabled flag.
func configureVirtualRouterElement(c *Call) (*asyncJob, error) {
	e, _ := model.ByID(c.st.VRElements, c.Params.Get("id"))
	return c.configureElement(e, "virtualrouterelement",
		"org.apache.cloudstack.api.command.admin.router.ConfigureVirtualRouterElementCmd"), nil
}

// configureInternalLoadBalancerElement is
// InternalLoadBalancerElement.configureInternalLoadBalancerElement: only an
// InternalLbVm element.
func configureInternalLoadBalancerElement(c *Call) (*asyncJob, error) {
	e, _ := model.ByID(c.st.VRElements, c.Params.Get("id"))
	if e.Type != "InternalLbVm" {
		return nil, paramError("Can't find InternalLbVm element with network service provider id %d to be used as a provider for InternalLbVm", e.InternalID)
	}
	return c.configureElement(e, "internalloadbalancerelement",
		"org.apache.cloudstack.api.command.admin.internallb.ConfigureInternalLoadBalancerElementCmd"), nil
}

func (c *Call) configureElement(e *model.VirtualRouterElement, key, class string) *asyncJob {
	enabled := c.Params.Bool("enabled", false)
	return &asyncJob{instanceType: "None", instanceID: e.ID, cmdClass: class,
		run: func() (any, error) {
			e.Enabled = enabled
			return map[string]any{key: c.vrElementView(e)}, nil
		}}
}
