package network

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// validPort is NetUtils.isValidPort.
func validPort(p int) bool { return p >= 1 && p <= 65535 }

// validateFirewallRule is FirewallManagerImpl.validateFirewallRule for an
// address of an isolated network or of a VPC tier (a VPC address gets its
// tier before its first rule: createOnTier, staticNATNetwork). The
// purpose's service must be in the network (getNetworkServiceCapabilities,
// UnsupportedServiceException) and the protocol among the virtual router's
// SupportedProtocols for it; static NAT reads no capabilities, so any
// protocol passes there.
func validateFirewallRule(c *kernel.Call, ip *model.PublicIP, start, end *int, proto, purpose string) *kernel.APIError {
	switch {
	case start != nil && !validPort(*start):
		return kernel.ParamError("publicPort is an invalid value: %d", *start)
	case end != nil && !validPort(*end):
		return kernel.ParamError("Public port range is an invalid value: %d", *end)
	case start != nil && end != nil && *start > *end:
		return kernel.ParamError("Start port can't be bigger than end port")
	case ip.NetworkID == "": // validateFirewallRuleForIsolatedIp
		return kernel.ParamError("Unable to create firewall rule ; ip with specified id is not associated with any network")
	}
	caps := map[string]string{model.PurposeFirewall: firewallProtocols, model.PurposeLB: lbProtocols}[purpose]
	if caps == "" {
		return nil
	}
	if err := requireService(c.State, c.State.Network(ip.NetworkID), ruleServices[purpose]); err != nil {
		return err
	}
	lower := strings.ToLower(proto)
	switch {
	case !strings.Contains(caps, lower):
		return kernel.ParamError("Protocol %s is not supported in zone %d", proto, c.State.Zone(ip.ZoneID).InternalID)
	case lower == protoICMP && purpose != model.PurposeFirewall:
		return kernel.ParamError("Protocol %s is currently supported only for rules with purpose %s", proto, model.PurposeFirewall)
	}
	return nil
}

// ruleConflict is a NetworkRuleConflictException as the create commands
// answer it (ServerApiException NETWORK_RULE_CONFLICT_ERROR).
func ruleConflict(format string, args ...any) *kernel.APIError {
	return &kernel.APIError{Code: kernel.CodeRuleConflict, CSCode: kernel.CsServerAPIException, Text: fmt.Sprintf(format, args...)}
}

// detectRulesConflict is FirewallManagerImpl.detectRulesConflict for a new
// rule on a public address against the address's rules that are not
// revoked. Destination CIDRs are always empty (ingress rules have none), so
// they never tell two rules apart.
func detectRulesConflict(c *kernel.Call, n *model.NetRule) *kernel.APIError {
	ip, _ := model.ByID(c.State.PublicIPs, n.IPID)
	for _, r := range rulesOnIP(c.State, n.IPID, "") {
		if r == n {
			continue
		}
		oneFirewall := (r.Purpose == model.PurposeFirewall || n.Purpose == model.PurposeFirewall) &&
			(n.Purpose != r.Purpose || !strings.EqualFold(n.Protocol, r.Protocol))
		bothFirewall := r.Purpose == model.PurposeFirewall && n.Purpose == model.PurposeFirewall
		duplicated := bothFirewall && conflictingCIDRs(r.CIDRs, n.CIDRs)
		if !oneFirewall {
			if r.Purpose == model.PurposeStaticNat && n.Purpose != model.PurposeStaticNat {
				return ruleConflict("There is 1 to 1 Nat rule specified for the ip address id=%d", ip.InternalID)
			} else if r.Purpose != model.PurposeStaticNat && n.Purpose == model.PurposeStaticNat {
				return ruleConflict("There is already firewall rule specified for the ip address id=%d", ip.InternalID)
			}
		}
		if !strings.EqualFold(r.NetworkID, n.NetworkID) {
			return ruleConflict("New rule is for a different network than what's specified in rule null") // rule.getXid() is never set
		}
		sameProto := strings.EqualFold(n.Protocol, r.Protocol)
		if strings.EqualFold(n.Protocol, protoICMP) && sameProto && duplicated && sameICMP(n, r) {
			return kernel.ParamError("New rule conflicts with existing rule: %s", r)
		}
		notNullPorts := n.StartPort != nil && n.EndPort != nil && r.StartPort != nil && r.EndPort != nil
		nullPorts := n.StartPort == nil && n.EndPort == nil && r.StartPort == nil && r.EndPort == nil
		if nullPorts && duplicated && sameProto && !strings.EqualFold(n.Protocol, protoICMP) {
			return ruleConflict("There is already a firewall rule specified with protocol = %s and no ports", n.Protocol)
		}
		if !notNullPorts || !portRangesConflict(n, r, oneFirewall, bothFirewall, duplicated) {
			continue
		}
		allowStaticNat := r.Purpose == model.PurposeStaticNat && n.Purpose == model.PurposeStaticNat && !sameProto
		if !allowStaticNat && !oneFirewall {
			return ruleConflict("The range specified, %d-%d, conflicts with rule %s which has %d-%d",
				*n.StartPort, *n.EndPort, r, *r.StartPort, *r.EndPort)
		}
	}
	return nil
}

// sameICMP compares ICMP codes and types. Only firewall rules get them
// (-1 by default); a static NAT rule of protocol icmp has none, where
// CloudStack's comparison would throw a NullPointerException.
func sameICMP(n, r *model.NetRule) bool {
	return n.ICMPCode != nil && r.ICMPCode != nil && n.ICMPType != nil && r.ICMPType != nil &&
		*n.ICMPCode == *r.ICMPCode && *n.ICMPType == *r.ICMPType
}

// conflictingCIDRs is FirewallManagerImpl.detectConflictingCidrs: two empty
// lists conflict, otherwise they must share a CIDR.
func conflictingCIDRs(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// portRangesConflict is FirewallManagerImpl.checkIfRulesHaveConflictingPortRanges.
func portRangesConflict(n, r *model.NetRule, oneFirewall, bothFirewall, duplicated bool) bool {
	if oneFirewall || (bothFirewall && !duplicated) {
		return false
	}
	ns, ne, rs, re := *n.StartPort, *n.EndPort, *r.StartPort, *r.EndPort
	return (rs <= ns && re >= ns) || (rs <= ne && re >= ne) || (ns <= rs && ne >= rs) || (ns <= re && ne >= re)
}

// validCIDR is NetUtils.isValidIp4Cidr || isValidIp6Cidr.
func validCIDR(s string) bool {
	_, err := netip.ParsePrefix(s)
	return err == nil
}
