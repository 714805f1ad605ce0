package views

import (
	"encoding/json"
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// capability is one Network.Capability of a service with its value.
type capability struct{ name, value string }

// haproxyStickiness is VirtualRouterElement.getHAProxyStickinessCapability:
// the three methods Gson-serialised, each parameter's description " "
// (LbStickinessMethod.addParam drops it: "UI is breaking if the capability
// string length is larger").
var haproxyStickiness = func() string {
	type param struct {
		Name        string `json:"paramname"`
		Required    bool   `json:"required"`
		IsFlag      bool   `json:"isflag"`
		Description string `json:"description"`
	}
	type method struct {
		Name        string  `json:"methodname"`
		Params      []param `json:"paramlist"`
		Description string  `json:"description"`
	}
	params := func(names []string, flags ...string) []param {
		out := make([]param, 0, len(names))
		for _, n := range names {
			out = append(out, param{Name: n, IsFlag: slices.Contains(flags, n), Description: " "})
		}
		return out
	}
	b, _ := json.Marshal([]method{
		{"LbCookie", params([]string{"cookie-name", "mode", "nocache", "indirect", "postonly", "domain"}, "nocache", "indirect", "postonly"),
			"This is loadbalancer cookie based stickiness method."},
		{"AppCookie", params([]string{"cookie-name", "length", "holdtime", "request-learn", "prefix", "mode"}, "request-learn", "prefix"),
			"This is App session based sticky method. Define session stickiness on an existing application cookie. " +
				"It can be used only for a specific http traffic"},
		{"SourceBased", params([]string{"tablesize", "expire"}),
			"This is source based Stickiness method, it can be used for any type of protocol."},
	})
	return string(b)
}()

// virtualRouterCapabilities is VirtualRouterElement.setCapabilities (the
// AutoScaleCounters value as Gson writes AutoScaleCounter, as a real
// management server answered it in cloudstack-go's recorded listNetworks).
// A service mapped to null has no entry's capabilities.
var virtualRouterCapabilities = map[string][]capability{
	"Lb": {{"SupportedLbAlgorithms", "roundrobin,leastconn,source"}, {"SupportedLBIsolation", "dedicated"},
		{"SupportedProtocols", "tcp, udp, tcp-proxy"}, {"SupportedStickinessMethods", haproxyStickiness},
		{"LbSchemes", "Public"}, {"AutoScaleCounters", `[{"methodname":"cpu","paramlist":[]},{"methodname":"memory","paramlist":[]}]`}},
	"Firewall": {{"TrafficStatistics", "per public ip"}, {"SupportedProtocols", "tcp,udp,icmp"},
		{"SupportedEgressProtocols", "tcp,udp,icmp, all"}, {"SupportedTrafficDirection", "ingress, egress"}, {"MultipleIps", "true"}},
	"Vpn":            {{"SupportedVpnTypes", "pptp,l2tp,ipsec"}, {"VpnTypes", "removeaccessvpn"}},
	"Dns":            {{"AllowDnsSuffixModification", "true"}},
	"UserData":       nil,
	"Dhcp":           {{"DhcpAccrossMultipleSubnets", "true"}},
	"Gateway":        nil,
	"SourceNat":      {{"SupportedSourceNatTypes", "peraccount"}, {"RedundantRouter", "true"}},
	"StaticNat":      nil,
	"PortForwarding": {{"SupportedProtocols", "tcp,udp"}},
}

// elementCapabilities are the capabilities a provider's element declares for
// a service (NetworkElement.getCapabilities().get(service)):
// VpcVirtualRouterElement.setCapabilities copies the VirtualRouter's, sets
// the VPN type s2svpn, drops Firewall and adds NetworkACL. Departure: the
// other providers' elements (ConfigDrive, InternalLbVm, …) were not read and
// are taken to declare none.
func elementCapabilities(provider, service string) []capability {
	switch provider {
	case "VirtualRouter":
		return virtualRouterCapabilities[service]
	case "VpcVirtualRouter":
		switch service {
		case "Firewall":
			return nil
		case "Vpn":
			return []capability{{"SupportedVpnTypes", "pptp,l2tp,ipsec"}, {"VpnTypes", "s2svpn"}}
		case "NetworkACL":
			return []capability{{"SupportedProtocols", "tcp,udp,icmp"}}
		}
		return virtualRouterCapabilities[service]
	}
	return nil
}

// networkServiceViews are createNetworkResponse's services: each service of
// the network (its offering's: NetworkOrchestrator.setupNetwork maps them)
// but Gateway, with its providers and the capabilities
// NetworkModelImpl.getNetworkCapabilities gives it (the capabilities of the
// service's provider's element), adjusted from the offering's flags:
// SupportedLBIsolation follows isDedicatedLB; SourceNat's are replaced by
// SupportedSourceNatTypes and RedundantRouter; StaticNat gains ElasticIp and
// AssociatePublicIP, Lb ElasticLb and InlineMode. Only SupportedLBIsolation,
// SupportedSourceNatTypes and RedundantRouter can be chosen. The offering's
// flags are those createNetworkOffering keeps without a servicecapabilitylist
// (NetworkOfferingServiceImpl on main): no dedicated LB, shared source NAT,
// redundant router, elastic IP or LB, inline mode or AssociatePublicIP.
func networkServiceViews(o *model.NetworkOffering) []map[string]any {
	out := []map[string]any{}
	for _, svc := range NetworkServices {
		provs, ok := o.Services[svc]
		if !ok || svc == "Gateway" {
			continue
		}
		provs = slices.Sorted(slices.Values(provs))
		var caps []capability
		for _, p := range provs {
			if c := elementCapabilities(p, svc); c != nil {
				caps = c
				break
			}
		}
		pv := []map[string]any{}
		for _, p := range provs {
			pv = append(pv, map[string]any{"name": p})
		}
		out = append(out, map[string]any{"name": svc, "capability": capabilityViews(svc, caps), "provider": pv})
	}
	return out
}

// capabilityViews is the capability list createNetworkResponse builds for a
// service from its element's capabilities.
func capabilityViews(svc string, caps []capability) []map[string]any {
	chosen := func(name string) bool {
		return name == "SupportedLBIsolation" || name == "SupportedSourceNatTypes" || name == "RedundantRouter"
	}
	out := []map[string]any{}
	add := func(name, value string, canChoose bool) {
		out = append(out, map[string]any{"name": name, "value": value, "canchooseservicecapability": canChoose})
	}
	if svc != "SourceNat" {
		for _, c := range caps {
			value := c.value
			if svc == "Lb" && c.name == "SupportedLBIsolation" {
				value = "shared" // isDedicatedLB false
			}
			add(c.name, value, chosen(c.name))
		}
	}
	switch svc {
	case "SourceNat":
		add("SupportedSourceNatTypes", "peraccount", true) // isSharedSourceNat false
		add("RedundantRouter", "false", true)
	case "StaticNat":
		add("ElasticIp", "false", false)
		add("AssociatePublicIP", "false", false)
	case "Lb":
		add("ElasticLb", "false", false)
		add("InlineMode", "false", false)
	}
	return out
}
