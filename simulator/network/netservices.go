package network

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// The network-service checks the rule families share: what a network's
// offering provides and what an address is already used for
// (NetworkModelImpl.checkIpForService, getIpToServices,
// getNetworkServiceCapabilities).

// csUnsupportedService is UnsupportedServiceException's CSExceptionErrorCode.
const csUnsupportedService = 4390

// unsupportedService is an UnsupportedServiceException (a
// CloudRuntimeException) as ApiServer.handleRequest's catch-all answers it:
// 530 with the exception's own code and its text (the caller is an admin).
func unsupportedService(service string, n *model.Network) *kernel.APIError {
	// NetworkModelImpl.getNetworkServiceCapabilities: the network's internal
	// id, not its UUID ("TBD: networkId to uuid").
	return &kernel.APIError{Code: kernel.CodeInternalError, CSCode: csUnsupportedService,
		Text: fmt.Sprintf("Service %s is not supported in the network id=%d", service, n.InternalID)}
}

// requireService is the refusal of NetworkModelImpl.getNetworkServiceCapabilities,
// which the rule families call for a service's capabilities (the protocols
// the provider supports): the network's offering must provide the service.
// Departure: the provider is taken to be the virtual router, whose
// capabilities the callers hold; "is not supported by the element" (a
// provider without capabilities for the service) cannot happen.
func requireService(st *model.State, n *model.Network, service string) *kernel.APIError {
	if n == nil || Provides(st, n, service) {
		return nil
	}
	return unsupportedService(service, n)
}

// ruleServices maps a rule purpose to the service getIpToServices counts it
// as (port forwarding and VPN rules do not exist here).
var ruleServices = map[string]string{model.PurposeStaticNat: "StaticNat", model.PurposeLB: "Lb", model.PurposeFirewall: "Firewall"}

// ipServices is NetworkModelImpl.getIpToServices for one address with
// postApplyRules false: SourceNat for the source NAT address; nothing more
// while it is Allocating; then the services of its rules that are not
// revoked (firewall rules only if includingFirewall) and StaticNat when
// static NAT points at a VM, or, when those are none, of its revoked rules
// too and StaticNat when static NAT is on. Services are in Network.Service's
// order.
func ipServices(st *model.State, ip *model.PublicIP, includingFirewall bool) []string {
	set := map[string]bool{}
	if ip.SourceNAT {
		set["SourceNat"] = true
	}
	if ip.State != model.IPAllocating {
		purposes := rulePurposes(st, ip, false, includingFirewall)
		if ip.StaticNAT && ip.VMID != "" {
			purposes[model.PurposeStaticNat] = true
		}
		if len(purposes) == 0 {
			purposes = rulePurposes(st, ip, true, includingFirewall)
			if ip.StaticNAT {
				purposes[model.PurposeStaticNat] = true
			}
		}
		for p := range purposes {
			set[ruleServices[p]] = true
		}
	}
	var out []string
	for _, s := range views.NetworkServices {
		if set[s] {
			out = append(out, s)
		}
	}
	return out
}

// rulePurposes is NetworkModelImpl.getPublicIpPurposeInRules: the purposes
// of an address's live rules, revoked ones only if includeRevoked.
func rulePurposes(st *model.State, ip *model.PublicIP, includeRevoked, includingFirewall bool) map[string]bool {
	out := map[string]bool{}
	for _, r := range st.Rules {
		if r.Removed != nil || !strings.EqualFold(r.IPID, ip.ID) || (!includeRevoked && r.State == model.RuleRevoke) {
			continue
		}
		if r.Purpose != model.PurposeFirewall || includingFirewall {
			out[r.Purpose] = true
		}
	}
	return out
}

// checkIPForService is NetworkModelImpl.checkIpForService: nothing is
// checked outside Isolated offerings; an address already used for some
// service may take another only if the network provides it
// (canIpUsedForService); without conserve mode an address serves one
// service besides firewall rules (canIpUsedForNonConserveService).
// networkID "" is the address's network. Departure: canIpUsedForService's
// IpDeployingRequester comparison of the old and new providers is not made
// (every provider of these services is the virtual router here).
func checkIPForService(st *model.State, ip *model.PublicIP, service, networkID string) *kernel.APIError {
	n := st.Network(model.FirstNonEmpty(networkID, ip.NetworkID))
	if n == nil {
		return nil
	}
	o := st.NetworkOffering(n.OfferingID)
	if o == nil || o.GuestType != "Isolated" {
		return nil
	}
	if len(ipServices(st, ip, true)) > 0 && !Provides(st, n, service) {
		return kernel.ParamError("There is no new provider for IP %s of service %s!", ip.Address, service)
	}
	if o.ConserveMode {
		return nil
	}
	used := ipServices(st, ip, false)
	switch {
	case len(used) == 0:
		return nil
	case len(used) != 1:
		return kernel.ParamError("There are multiple services used ip %s.", ip.Address)
	case used[0] != service && service != "Firewall":
		return kernel.ParamError("The IP %s is already used as %s rather than %s", ip.Address, used[0], service)
	}
	return nil
}

// sharedOfferingWithServices is IpAddressManagerImpl.isSharedNetworkOfferingWithServices
// (NetworkServiceImpl.allocateIP has the same test): a Shared offering with
// any of the services a public address can serve.
func sharedOfferingWithServices(o *model.NetworkOffering) bool {
	return o != nil && o.GuestType == "Shared" && slices.ContainsFunc(
		[]string{"SourceNat", "StaticNat", "Firewall", "PortForwarding", "Lb"}, o.Has)
}

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
