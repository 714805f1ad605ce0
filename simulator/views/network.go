package views

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// NetworkView is ApiResponseHelper.createNetworkResponse; the offering's
// fields come from the network's offering.
func NetworkView(c *kernel.Call, n *model.Network) map[string]any {
	if n.TrafficType == model.TrafficPublic {
		return publicNetworkView(c, n)
	}
	z, a := c.State.Zone(n.ZoneID), c.State.Account(n.AccountID)
	d := c.State.Domain(a.DomainID)
	o := c.State.NetworkOffering(n.OfferingID)
	if o == nil {
		o = &model.NetworkOffering{} // every network has its offering; never nil in a consistent state
	}
	v := map[string]any{"id": n.ID, "name": n.Name, "displaytext": n.DisplayText, "zoneid": z.ID,
		"zonename": z.Name, "physicalnetworkid": n.PhysicalNetworkID, "networkofferingid": n.OfferingID,
		"networkofferingname": o.Name, "networkofferingdisplaytext": o.DisplayText,
		"networkofferingconservemode": o.ConserveMode, "networkofferingavailability": o.Availability, "type": n.Type,
		"state": n.State, "traffictype": "Guest", "broadcastdomaintype": "Vlan",
		"gateway": n.Gateway, "netmask": n.Netmask,
		"cidr": n.CIDR, "dns1": z.DNS1, "networkdomain": n.NetworkDomain, "acltype": model.Or(n.ACLType, "Account"),
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.DisplayPath(),
		"issystem": false, "isdefault": false, "ispersistent": false, "canusefordeploy": n.CanUseForDeploy(),
		"restartrequired": false, "specifyipranges": o.SpecifyIPRanges, "specifyvlan": o.SpecifyVLAN, "redundantrouter": false,
		"displaynetwork": true, "egressdefaultpolicy": o.EgressDefault, "supportsvmautoscaling": true,
		"strechedl2subnet": false, "hasannotations": false, "internetprotocol": "IPv4", "privatemtu": 1500,
		"publicmtu": 1500, "related": n.ID, "created": kernel.CsTime(n.Created), "tags": []any{},
		"service": networkServiceViews(o), "receivedbytes": 0, "sentbytes": 0} // no user_statistics: sums of none
	if fullView(c) {
		v["details"] = map[string]string{} // "return network details only to Root admin"
	}
	// An Allocated network has no broadcast URI or VLAN until implemented;
	// createNetworkResponse returns them "only to Root admin" (the Full view).
	if n.VLAN != "" && c.Account.Type == 1 {
		v["broadcasturi"], v["vlan"] = "vlan://"+n.VLAN, n.VLAN
	}
	ownerName(c, v, a) // ApiResponseHelper.populateOwner: a project's network shows the project
	vpcFields(c, v, n.VPCID)
	if l, ok := model.ByID(c.State.NetworkACLLists, n.ACLID); ok && n.ACLID != "" {
		v["aclid"], v["aclname"] = l.ID, l.Name
	}
	return v
}

// publicNetworkView is createNetworkResponse for a zone's public network
// (model.EnsurePublicNetwork): no name, display text, guest type, CIDR,
// physical network, ACL type, network domain or broadcast URI to show; the
// System-Public-Network offering's fields and issystem; DNS from the zone
// (PublicNetworkGuru.updateNetworkProfile); no services; the system account
// in ROOT as owner (populateOwner); canusefordeploy false
// (NetworkModelImpl.canUseForDeploy: not Guest traffic).
func publicNetworkView(c *kernel.Call, n *model.Network) map[string]any {
	z, root := c.State.Zone(n.ZoneID), c.State.Domains[0]
	o := c.State.SystemNetworkOffering(n.OfferingID)
	if o == nil {
		o = &model.NetworkOffering{} // every network has its offering; never nil in a consistent state
	}
	v := map[string]any{"id": n.ID, "broadcastdomaintype": "Vlan", "traffictype": n.TrafficType, "zoneid": z.ID,
		"zonename": z.Name, "networkofferingid": o.ID, "networkofferingname": o.Name,
		"networkofferingdisplaytext": o.DisplayText, "networkofferingconservemode": o.ConserveMode, "issystem": true,
		"networkofferingavailability": o.Availability, "ispersistent": o.Persistent, "specifyvlan": o.SpecifyVLAN,
		"displaynetwork": true, "state": n.State, "restartrequired": false, "related": n.ID, "dns1": z.DNS1,
		"service": []any{}, "account": "system", "domainid": root.ID, "domain": root.Name,
		"domainpath": root.DisplayPath(), "specifyipranges": o.SpecifyIPRanges, "canusefordeploy": false,
		"tags": []any{}, "hasannotations": false, "strechedl2subnet": false, "redundantrouter": false,
		"supportsvmautoscaling": false, "created": kernel.CsTime(n.Created), "receivedbytes": 0, "sentbytes": 0}
	if z.DNS2 != "" {
		v["dns2"] = z.DNS2
	}
	if fullView(c) {
		v["details"] = map[string]string{}
	}
	return v
}

// NetworkServices are Network.Service's names (getService matches them
// case-insensitively).
var NetworkServices = []string{"Vpn", "Dhcp", "Dns", "Gateway", "Firewall", "Lb", "UserData", "SourceNat",
	"StaticNat", "PortForwarding", "SecurityGroup", "NetworkACL", "Connectivity", "BaremetalPxeService"}

// NetworkOfferingView is ApiResponseHelper.createNetworkOfferingResponse.
func NetworkOfferingView(o *model.NetworkOffering) map[string]any {
	return map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "traffictype": "Guest",
		"isdefault": false, "specifyvlan": o.SpecifyVLAN, "conservemode": o.ConserveMode,
		"specifyipranges": o.SpecifyIPRanges, "availability": o.Availability, "state": o.State,
		"guestiptype": o.GuestType, "forvpc": o.ForVPC, "fortungsten": false, "fornsx": false,
		"ispersistent": o.Persistent, "egressdefaultpolicy": o.EgressDefault, "supportsstrechedl2subnet": false,
		"supportspublicaccess": false, "supportsinternallb": false, "internetprotocol": "IPv4",
		"created": kernel.CsTime(o.Created), "hasannotations": false, "networkrate": 200, "service": serviceViews(o),
		"tags": o.Tags}
}

// serviceViews are the offering's services in Network.Service's order,
// each with its providers.
func serviceViews(o *model.NetworkOffering) []map[string]any { return providedServices(o.Services) }

// PhysnetView is ApiResponseHelper.createPhysicalNetworkResponse.
func PhysnetView(c *kernel.Call, pn *model.PhysicalNetwork) map[string]any {
	z := c.State.Zone(pn.ZoneID)
	v := map[string]any{"id": pn.ID, "name": pn.Name, "zoneid": z.ID, "zonename": z.Name,
		"state": model.Or(pn.State, model.PhysnetEnabled), "isolationmethods": model.Or(pn.IsolationMethods, "VLAN"),
		"broadcastdomainrange": model.Or(pn.BroadcastDomainRange, "ZONE")}
	if pn.VLAN != "" {
		v["vlan"] = pn.VLAN
	}
	if pn.Tags != "" {
		v["tags"] = pn.Tags
	}
	return v
}

// TrafficTypeView is ApiResponseHelper.createTrafficTypeResponse; no
// hypervisor network labels are stored.
func TrafficTypeView(t *model.TrafficType) map[string]any {
	return map[string]any{"id": t.ID, "traffictype": t.Type, "physicalnetworkid": t.PhysicalNetworkID}
}

// ProviderView is ApiResponseHelper.createNetworkServiceProviderResponse.
func ProviderView(n *model.NetworkServiceProvider) map[string]any {
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

// VRElementView is ApiResponseHelper.createVirtualRouterProviderResponse.
func VRElementView(c *kernel.Call, e *model.VirtualRouterElement) map[string]any {
	root := c.State.Domains[0]
	admin := c.State.Accounts[0]
	return map[string]any{"id": e.ID, "nspid": e.NSPID, "enabled": e.Enabled, "account": admin.Name,
		"domainid": root.ID, "domain": root.Name, "domainpath": root.DisplayPath()}
}

// PublicIPView is ApiResponseHelper.createIPAddressResponse.
func PublicIPView(c *kernel.Call, ip *model.PublicIP) map[string]any {
	z := c.State.Zone(ip.ZoneID)
	v := map[string]any{"id": ip.ID, "ipaddress": ip.Address, "zoneid": z.ID, "zonename": z.Name,
		"issourcenat": ip.SourceNAT, "isstaticnat": ip.StaticNAT, "issystem": false, "forvirtualnetwork": true,
		"forsystemvms": false, "isportable": false, "fordisplay": true, "hasannotations": false,
		"state": ip.State, "tags": resourceTagViews(c, "PublicIpAddress", ip.ID)}
	v["hasrules"] = hasRules(c.State, ip.ID) // ApiResponseHelper.createIPAddressResponse: countRulesByIpId > 0
	r, _ := model.ByID(c.State.VlanRanges, ip.VlanRangeID)
	if r != nil {
		v["physicalnetworkid"] = r.PhysicalNetworkID
		// "show this info to full view only": the root admin's
		// …CmdByAdmin classes answer in ResponseView.Full (ApiServer.getCmdClass).
		if fullView(c) {
			v["vlanid"], v["vlanname"] = r.ID, r.VLAN
		}
	}
	addressNetwork(c, v, ip, r)
	if ip.Allocated != nil {
		v["allocated"] = kernel.CsTime(*ip.Allocated)
		addOwner(c, v, ip.AccountID)
	}
	if n := c.State.Network(ip.NetworkID); n != nil && ip.NetworkID != "" {
		v["associatednetworkid"], v["associatednetworkname"] = n.ID, n.Name
	}
	if vm, ok := model.ByID(c.State.VMs, ip.VMID); ok && ip.StaticNAT {
		v["virtualmachineid"], v["virtualmachinename"], v["virtualmachinedisplayname"] = vm.ID, vm.Name, vm.DisplayName
		v["virtualmachinetype"], v["vmipaddress"] = "UserVm", ip.VMIP
	}
	vpcFields(c, v, ip.VPCID)
	return v
}

// addressNetwork is createIPAddressResponse's "Network id the ip belongs
// to": the address's VLAN range's network (ApiDBUtils.getVlanNetworkId) or
// else the zone's public network (getPublicNetworkIdByZone), whatever guest
// network the address is associated with. The public network has no name
// (NetworkOrchestrator.setupNetwork is given none), so networkname is left
// out as Gson leaves out a null.
func addressNetwork(c *kernel.Call, v map[string]any, ip *model.PublicIP, r *model.VlanRange) {
	var n *model.Network
	if r != nil && r.NetworkID != "" {
		n, _ = model.ByID(c.State.SystemNetworks, r.NetworkID)
	}
	if n == nil {
		n = c.State.PublicNetworkOf(ip.ZoneID)
	}
	if n == nil {
		return
	}
	v["networkid"] = n.ID
	if n.Name != "" {
		v["networkname"] = n.Name
	}
}

// VlanRangeView is ApiResponseHelper.createVlanIpRangeResponse's
// VlanIpRangeResponse; networkid is the range's network (vlan.network_id:
// the zone's public network). A range dedicated to no account or domain
// whose network is not a Guest one shows no owner, and provider is null
// (no vlan_details provider key), so both are left out as Gson does.
func VlanRangeView(c *kernel.Call, v *model.VlanRange) map[string]any {
	out := map[string]any{"id": v.ID, "zoneid": v.ZoneID, "physicalnetworkid": v.PhysicalNetworkID,
		"vlan": v.VLAN, "gateway": v.Gateway, "netmask": v.Netmask, "cidr": v.CIDR, "startip": v.StartIP,
		"endip": v.EndIP, "forvirtualnetwork": true, "forsystemvms": false}
	if v.NetworkID != "" {
		out["networkid"] = v.NetworkID
	}
	return out
}

// SecurityGroupView is SecurityGroupJoinDaoImpl.newSecurityGroupResponse
// (the simulator keeps no rules).
func SecurityGroupView(c *kernel.Call, g *model.SecurityGroup) map[string]any {
	ids := []string{}
	for _, vm := range c.State.VMs {
		if vm.Removed == nil && model.ContainsFold(vm.SecurityGroupIDs, g.ID) {
			ids = append(ids, vm.ID)
		}
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "ingressrule": []any{}, "egressrule": []any{},
		"tags": resourceTagViews(c, "SecurityGroup", g.ID), "virtualmachinecount": len(ids), "virtualmachineids": ids}
	if g.Description != "" {
		v["description"] = g.Description
	}
	addOwner(c, v, g.AccountID)
	return v
}
