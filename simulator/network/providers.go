package network

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// providerCommands are the commands of providers.go (registerCommands).
func providerCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listNetworkServiceProviders", IDKind: model.KindProvider, Sync: listNetworkServiceProviders},
		{Name: "updateNetworkServiceProvider", IDKind: model.KindProvider, Async: updateNetworkServiceProvider},
		{Name: "listVirtualRouterElements", IDKind: model.KindVRElement, Sync: listVirtualRouterElements},
		{Name: "configureVirtualRouterElement", IDKind: model.KindVRElement, Async: configureVirtualRouterElement},
		{Name: "listInternalLoadBalancerElements", IDKind: model.KindVRElement, Sync: listInternalLoadBalancerElements},
		{Name: "configureInternalLoadBalancerElement", IDKind: model.KindVRElement, Async: configureInternalLoadBalancerElement},
	}
}

// listNetworkServiceProviders is NetworkServiceImpl.listNetworkServiceProviders:
// name and state match whole (case-insensitively, as MySQL compares them) and
// the newest provider comes first.
func listNetworkServiceProviders(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.NetworkServiceProvider]{Key: "networkserviceprovider", ID: (*model.NetworkServiceProvider).UUID,
		View: kernel.PlainView(views.ProviderView)}
	p := c.Params
	rows := slices.Clone(c.State.Providers)
	slices.Reverse(rows)
	return l.Run(c, rows, func(n *model.NetworkServiceProvider) bool {
		return kernel.OptEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			kernel.OptEq(p.Get("name"), n.Name) && kernel.OptEq(p.Get("state"), n.State)
	})
}

// updateNetworkServiceProvider follows NetworkServiceImpl.updateNetworkServiceProvider:
// enabling needs the element ready (VirtualRouterElement.isReady: its
// element configured enabled); Shutdown cannot be set.
func updateNetworkServiceProvider(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	nsp, _ := model.ByID(c.State.Providers, p.Get("id"))
	state := p.Get("state")
	switch state {
	case "", model.ProviderEnabled, model.ProviderDisabled:
	case model.ProviderShutdown:
		return nil, kernel.ParamError("Updating the provider state to 'Shutdown' is not supported")
	default:
		return nil, kernel.ParamError("Unable to resolve state '%s' to a supported value {Enabled or Disabled}", state)
	}
	if p.Has("servicelist") && nsp.Name != "VirtualRouter" && nsp.Name != "VpcVirtualRouter" {
		return nil, kernel.ParamError("Cannot update set of Services for this Service Provider '%s'", nsp.Name)
	}
	return &kernel.AsyncJob{InstanceType: "PhysicalNetworkServiceProvider", InstanceID: nsp.ID,
		CmdClass: "org.apache.cloudstack.api.command.admin.network.UpdateNetworkServiceProviderCmd",
		Run: func() (any, error) {
			if err := SetProviderState(c.State, nsp, state); err != nil {
				return nil, err
			}
			return map[string]any{"networkserviceprovider": views.ProviderView(nsp)}, nil
		}}, nil
}

// SetProviderState applies a checked state; enabling needs the provider
// ready.
func SetProviderState(st *model.State, nsp *model.NetworkServiceProvider, state string) *kernel.APIError {
	if state == model.ProviderEnabled && !providerReady(st, nsp) {
		return kernel.InternalError("Provider is not ready, cannot Enable the provider, please configure the provider first")
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
	if e := VRElementOf(st, nsp.ID); e != nil {
		return e.Enabled
	}
	return true
}

// VRElementOf is the virtual router element of a provider; nil when none
// (VirtualRouterProviderDao.findByNspIdAndType).
func VRElementOf(st *model.State, nspID string) *model.VirtualRouterElement {
	for _, e := range st.VRElements {
		if e.NSPID == nspID {
			return e
		}
	}
	return nil
}

// listVirtualRouterElements lists the virtual routers' elements; the
// internal load balancers' share the table but have their own command.
func listVirtualRouterElements(c *kernel.Call) (any, error) {
	return listElements(c, "virtualrouterelement", func(e *model.VirtualRouterElement) bool { return e.Type != "InternalLbVm" })
}

// listInternalLoadBalancerElements is
// InternalLoadBalancerElement.searchForInternalLoadBalancerElements: only
// InternalLbVm elements.
func listInternalLoadBalancerElements(c *kernel.Call) (any, error) {
	return listElements(c, "internalloadbalancerelement", func(e *model.VirtualRouterElement) bool { return e.Type == "InternalLbVm" })
}

func listElements(c *kernel.Call, key string, ofType func(*model.VirtualRouterElement) bool) (any, error) {
	l := kernel.Lister[*model.VirtualRouterElement]{Key: key, ID: (*model.VirtualRouterElement).UUID, View: views.VRElementView}
	p := c.Params
	return l.Run(c, c.State.VRElements, ofType, func(e *model.VirtualRouterElement) bool {
		return kernel.OptEq(p.Get("nspid"), e.NSPID) && (!p.Has("enabled") || p.Bool("enabled", false) == e.Enabled)
	})
}

// configureVirtualRouterElement is VirtualRouterElement.configure: it sets
// the element's enabled flag.
func configureVirtualRouterElement(c *kernel.Call) (*kernel.AsyncJob, error) {
	e, _ := model.ByID(c.State.VRElements, c.Params.Get("id"))
	return configureElement(c, e, "virtualrouterelement",
		"org.apache.cloudstack.api.command.admin.router.ConfigureVirtualRouterElementCmd"), nil
}

// configureInternalLoadBalancerElement is
// InternalLoadBalancerElement.configureInternalLoadBalancerElement: only an
// InternalLbVm element.
func configureInternalLoadBalancerElement(c *kernel.Call) (*kernel.AsyncJob, error) {
	e, _ := model.ByID(c.State.VRElements, c.Params.Get("id"))
	if e.Type != "InternalLbVm" {
		return nil, kernel.ParamError("Can't find InternalLbVm element with network service provider id %d to be used as a provider for InternalLbVm", e.InternalID)
	}
	return configureElement(c, e, "internalloadbalancerelement",
		"org.apache.cloudstack.api.command.admin.internallb.ConfigureInternalLoadBalancerElementCmd"), nil
}

func configureElement(c *kernel.Call, e *model.VirtualRouterElement, key, class string) *kernel.AsyncJob {
	enabled := c.Params.Bool("enabled", false)
	return &kernel.AsyncJob{InstanceType: "None", InstanceID: e.ID, CmdClass: class,
		Run: func() (any, error) {
			e.Enabled = enabled
			return map[string]any{key: views.VRElementView(c, e)}, nil
		}}
}
