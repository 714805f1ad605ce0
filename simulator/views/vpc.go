package views

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// VPCOfferingView is ApiResponseHelper.createVpcOfferingResponse.
func VPCOfferingView(_ *kernel.Call, o *model.VPCOffering) map[string]any {
	return map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "isdefault": o.IsDefault,
		"state": o.State, "distributedvpcrouter": false, "supportsregionLevelvpc": false, "redundantvpcrouter": o.Redundant,
		"fornsx": false, "networkmode": "NATTED", "specifyasnumber": false, "internetprotocol": "IPv4",
		"created": kernel.CsTime(o.Created), "service": providedServices(o.Services)}
}

// providedServices are an offering's services in Network.Service's order,
// each with its providers.
func providedServices(services map[string][]string) []map[string]any {
	out := []map[string]any{}
	for _, svc := range NetworkServices {
		provs, ok := services[svc]
		if !ok {
			continue
		}
		pv := []map[string]any{}
		for _, p := range slices.Sorted(slices.Values(provs)) {
			pv = append(pv, map[string]any{"name": p})
		}
		out = append(out, map[string]any{"name": svc, "provider": pv})
	}
	return out
}

// VPCView is ApiResponseHelper.createVpcResponse: the VPC with its
// offering's services and its tiers.
func VPCView(c *kernel.Call, v *model.VPC) map[string]any {
	z := c.State.Zone(v.ZoneID)
	o, _ := model.ByID(c.State.VPCOfferings, v.OfferingID)
	if o == nil {
		o = &model.VPCOffering{} // every VPC has its offering; never nil in a consistent state
	}
	tiers := []map[string]any{}
	for _, n := range c.State.VPCTiers(v.ID) {
		tiers = append(tiers, NetworkView(c, n))
	}
	out := map[string]any{"id": v.ID, "name": v.Name, "displaytext": v.DisplayText, "state": v.State, "zoneid": z.ID,
		"zonename": z.Name, "vpcofferingid": o.ID, "vpcofferingname": o.Name, "cidr": v.CIDR,
		"networkdomain": v.NetworkDomain, "restartrequired": v.RestartRequired, "fordisplay": v.Display,
		"distributedvpcrouter": false, "regionlevelvpc": false, "redundantvpcrouter": o.Redundant, "publicmtu": 1500,
		"hasannotations": false, "created": kernel.CsTime(v.Created), "service": providedServices(o.Services),
		"network": tiers, "tags": resourceTagViews(c, "Vpc", v.ID)}
	addOwner(c, out, v.AccountID)
	return out
}

// ACLListView is ApiResponseHelper.createNetworkACLResponse.
func ACLListView(c *kernel.Call, l *model.NetworkACLList) map[string]any {
	out := map[string]any{"id": l.ID, "name": l.Name, "description": l.Description, "fordisplay": l.Display}
	if v, ok := model.ByID(c.State.VPCs, l.VPCID); ok {
		out["vpcid"], out["vpcname"] = v.ID, v.Name
	}
	return out
}

// ACLItemView is ApiResponseHelper.createNetworkACLItemResponse: the ports
// as strings, the CIDRs comma separated, ICMP type and code only when set.
func ACLItemView(c *kernel.Call, i *model.NetworkACLItem) map[string]any {
	out := map[string]any{"id": i.ID, "aclid": i.ACLID, "number": i.Number, "protocol": i.Protocol,
		"traffictype": i.TrafficType, "action": i.Action, "state": i.State, "cidrlist": strings.Join(i.CIDRs, ","),
		"reason": i.Reason, "fordisplay": i.Display, "tags": resourceTagViews(c, "NetworkACL", i.ID)}
	if l, ok := model.ByID(c.State.NetworkACLLists, i.ACLID); ok {
		out["aclname"] = l.Name
	}
	if i.StartPort != nil {
		out["startport"] = strconv.Itoa(*i.StartPort)
	}
	if i.EndPort != nil {
		out["endport"] = strconv.Itoa(*i.EndPort)
	}
	if i.ICMPType != nil {
		out["icmptype"] = *i.ICMPType
	}
	if i.ICMPCode != nil {
		out["icmpcode"] = *i.ICMPCode
	}
	return out
}

// vpcFields are the VPC fields createNetworkResponse and
// createIPAddressResponse add for a tier or an address of a VPC.
func vpcFields(c *kernel.Call, out map[string]any, vpcID string) {
	if v, ok := model.ByID(c.State.VPCs, vpcID); ok && vpcID != "" {
		out["vpcid"], out["vpcname"] = v.ID, v.Name
	}
}
