package simulator

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// String is IPAddressVO's toString, as CloudStack's error texts show it.
func ipString(st *model.State, ip *model.PublicIP) string {
	zone := int64(0)
	if z := st.Zone(ip.ZoneID); z != nil {
		zone = z.InternalID
	}
	return fmt.Sprintf("Ip[%s-%d]", ip.Address, zone)
}

func init() {
	register(
		command{name: "associateIpAddress", async: associateIPAddress},
		command{name: "listPublicIpAddresses", idKind: model.KindPublicIP, sync: listPublicIPAddresses},
		command{name: "disassociateIpAddress", idKind: model.KindPublicIP, async: disassociateIPAddress},
	)
	registerTaggable("PublicIpAddress", func(st *model.State, id string) (string, bool) {
		ip, ok := model.ByID(st.PublicIPs, id)
		if !ok || ip.State == model.IPFree {
			return "", false
		}
		return ip.AccountID, true
	})
}

// ensurePublicIPs gives every address of the public ranges its row and every
// implemented isolated network its source NAT address (CloudStack takes it
// when the network is implemented; the seeded network is). Older state
// files get them on first use.
func (c *Call) ensurePublicIPs() {
	for _, r := range c.st.VlanRanges {
		if hasIPsOf(c.st, r.ID) {
			continue
		}
		start, err1 := netip.ParseAddr(r.StartIP)
		end, err2 := netip.ParseAddr(r.EndIP)
		if err1 != nil || err2 != nil {
			continue
		}
		for a := start; a.Compare(end) <= 0; a = a.Next() {
			id, internal := c.st.NewID(model.KindPublicIP)
			c.st.PublicIPs = append(c.st.PublicIPs, &model.PublicIP{ID: id, InternalID: internal, Address: a.String(),
				ZoneID: r.ZoneID, VlanRangeID: r.ID, State: model.IPFree})
		}
		c.changed()
	}
	for _, n := range c.st.Networks {
		// NetworkOrchestrator.implementNetworkElementsAndResources: only a
		// network whose offering has SourceNat gets the address.
		if n.Type != "Isolated" || n.State != model.NetworkImplemented || sourceNATOf(c.st, n.ID) != nil ||
			!networkProvides(c.st, n, "SourceNat") {
			continue
		}
		if ip := freePublicIP(c.st, n.ZoneID, ""); ip != nil {
			c.allocatePublicIP(ip, n.AccountID)
			ip.State, ip.NetworkID, ip.SourceNAT = model.IPAllocated, n.ID, true
		}
	}
}

func hasIPsOf(st *model.State, rangeID string) bool {
	for _, ip := range st.PublicIPs {
		if ip.VlanRangeID == rangeID {
			return true
		}
	}
	return false
}

func sourceNATOf(st *model.State, networkID string) *model.PublicIP {
	for _, ip := range st.PublicIPs {
		if ip.SourceNAT && ip.NetworkID == networkID {
			return ip
		}
	}
	return nil
}

// freePublicIP is the lowest free address of the zone, or the requested one
// if it is free.
func freePublicIP(st *model.State, zoneID, requested string) *model.PublicIP {
	for _, ip := range st.PublicIPs {
		if ip.ZoneID == zoneID && ip.State == model.IPFree && (requested == "" || ip.Address == requested) {
			return ip
		}
	}
	return nil
}

func (c *Call) allocatePublicIP(ip *model.PublicIP, accountID string) {
	now := c.eng.now()
	ip.State, ip.AccountID, ip.Allocated = model.IPAllocating, accountID, &now
	c.changed()
}

// staticNATOf is the public address static-NATed to a VM, if any.
func staticNATOf(st *model.State, vmID string) *model.PublicIP {
	for _, ip := range st.PublicIPs {
		if ip.StaticNAT && strings.EqualFold(ip.VMID, vmID) {
			return ip
		}
	}
	return nil
}

// isolatedNetworksOf are an account's isolated networks in a zone.
func isolatedNetworksOf(st *model.State, accountID, zoneID string) []*model.Network {
	var out []*model.Network
	for _, n := range st.Networks {
		if n.AccountID == accountID && n.ZoneID == zoneID && n.Type == "Isolated" {
			out = append(out, n)
		}
	}
	return out
}

// associateIPAddress takes a free address for the network (or, given only a
// zone, for the account's isolated network there) at once, as
// AssociateIPAddrCmd.create (NetworkServiceImpl.allocateIP,
// IpAddressManagerImpl.allocateIp) does; the job (AssociateIPAddrCmd.execute,
// associateIPToGuestNetwork) finishes it. Both refuse networks whose
// offering lacks the services a public address needs.
func associateIPAddress(c *Call) (*asyncJob, error) {
	c.ensurePublicIPs()
	p := c.Params
	if p.Get("vpcid") != "" {
		return nil, paramError("Unable to find an active VPC by id %s", p.Get("vpcid"))
	}
	net := c.st.Network(p.Get("networkid"))
	zoneID := p.Get("zoneid")
	switch {
	case net != nil:
		zoneID = net.ZoneID
	case zoneID == "":
		return nil, paramError("Unable to figure out zone to assign IP to. Please specify either zoneId, or networkId, or vpcId in the call") // AssociateIPAddrCmd.getZoneId
	default:
		nets := isolatedNetworksOf(c.st, c.Account.ID, zoneID)
		switch len(nets) {
		case 0:
			return nil, paramError("Account name=%s domain=%s doesn't have virtual networks in zone=%s",
				c.Account.Name, c.st.Domain(c.Account.DomainID).Name, c.st.Zone(zoneID).Name)
		case 1:
			net = nets[0]
		default:
			return nil, paramError("Account has more than one isolated network in the zone")
		}
	}
	if err := checkSharedForIPs(c.st, net); err != nil {
		return nil, err
	}
	ip := freePublicIP(c.st, zoneID, p.Get("ipaddress"))
	if ip == nil {
		return nil, &APIError{Code: codeCapacity, CSCode: csServerAPIException, Text: "Insufficient address capacity"}
	}
	c.allocatePublicIP(ip, c.Account.ID)
	return &asyncJob{instanceType: "IpAddress", instanceID: ip.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.admin.address.AssociateIPAddrCmdByAdmin",
		run: func() (any, error) {
			if err := checkIsolatedForIPs(c.st, net); err != nil {
				return nil, err
			}
			ip.State, ip.NetworkID = model.IPAllocated, net.ID
			// isSourceNatAvailableForNetwork: the first address of an Isolated
			// network without a source NAT address (one never implemented)
			// becomes its source NAT.
			ip.SourceNAT = net.Type == "Isolated" && sourceNATOf(c.st, net.ID) == nil // no VPCs or portable IPs here
			c.changed()
			return map[string]any{"ipaddress": c.publicIPView(ip)}, nil
		},
		fail: func(*APIError) { ip.Release() }, // associateIPToGuestNetwork's releaseOnFailure
	}, nil
}

// checkSharedForIPs is NetworkServiceImpl.allocateIP's refusal at create:
// in an advanced zone a Shared network takes public addresses only if its
// offering has a service that uses them.
func checkSharedForIPs(st *model.State, n *model.Network) *APIError {
	if n.Type != "Shared" || sharedOfferingWithServices(st.NetworkOffering(n.OfferingID)) {
		return nil
	}
	return paramError("Associate IP address can only be called on the shared networks in the advanced zone" +
		" with Firewall/Source Nat/Static Nat/Port Forwarding/Load balancing services enabled")
}

// checkIsolatedForIPs is IpAddressManagerImpl.associateIPToGuestNetwork's
// refusal in the job: an Isolated network takes public addresses only with
// the SourceNat service (the address is then unassigned). Its check of a
// Shared network repeats allocateIP's, which refused at create already.
func checkIsolatedForIPs(st *model.State, n *model.Network) *APIError {
	if n.Type != "Isolated" || networkProvides(st, n, "SourceNat") {
		return nil
	}
	return paramError("In zone of type Advanced ip address can be associated only to the network of guest type Isolated with the SourceNat enabled")
}

// listPublicIPAddresses is ManagementServerImpl.searchForIPAddresses: allocated
// addresses unless allocatedonly=false.
func listPublicIPAddresses(c *Call) (any, error) {
	c.ensurePublicIPs()
	l := lister[*model.PublicIP]{key: "publicipaddress", id: (*model.PublicIP).UUID,
		keyword: func(ip *model.PublicIP) []string { return []string{ip.Address} },
		zone:    func(ip *model.PublicIP) string { return ip.ZoneID }, view: (*Call).publicIPView}
	p := c.Params
	return l.run(c, c.st.PublicIPs, func(ip *model.PublicIP) bool {
		return (!p.Bool("allocatedonly", true) || ip.State != model.IPFree) && optEq(p.Get("ipaddress"), ip.Address) &&
			optEq(p.Get("associatednetworkid"), ip.NetworkID) && optEq(p.Get("vlanid"), ip.VlanRangeID) &&
			optEq(p.Get("state"), ip.State) && p.Bool("forvirtualnetwork", true) && !p.Bool("forsystemvms", false) &&
			(!p.Has("isstaticnat") || p.Bool("isstaticnat", false) == ip.StaticNAT) &&
			(!p.Has("issourcenat") || p.Bool("issourcenat", false) == ip.SourceNAT) &&
			taggedWith(c.st, "PublicIpAddress", ip.ID, p.Map("tags"))
	})
}

// publicIPView is ApiResponseHelper.createIPAddressResponse.
func (c *Call) publicIPView(ip *model.PublicIP) map[string]any {
	z := c.st.Zone(ip.ZoneID)
	v := map[string]any{"id": ip.ID, "ipaddress": ip.Address, "zoneid": z.ID, "zonename": z.Name,
		"issourcenat": ip.SourceNAT, "isstaticnat": ip.StaticNAT, "issystem": false, "forvirtualnetwork": true,
		"forsystemvms": false, "isportable": false, "fordisplay": true, "hasannotations": false,
		"state": ip.State, "tags": c.resourceTagViews("PublicIpAddress", ip.ID)}
	v["hasrules"] = hasRules(c.st, ip.ID) // ApiResponseHelper.createIPAddressResponse: countRulesByIpId > 0
	if r, ok := model.ByID(c.st.VlanRanges, ip.VlanRangeID); ok {
		v["vlanid"], v["vlanname"], v["physicalnetworkid"] = r.ID, r.VLAN, r.PhysicalNetworkID
	}
	if ip.Allocated != nil {
		v["allocated"] = csTime(*ip.Allocated)
		c.addOwner(v, ip.AccountID)
	}
	if n := c.st.Network(ip.NetworkID); n != nil && ip.NetworkID != "" {
		v["associatednetworkid"], v["associatednetworkname"] = n.ID, n.Name
	}
	if vm, ok := model.ByID(c.st.VMs, ip.VMID); ok && ip.StaticNAT {
		v["virtualmachineid"], v["virtualmachinename"], v["virtualmachinedisplayname"] = vm.ID, vm.Name, vm.DisplayName
		v["virtualmachinetype"], v["vmipaddress"] = "UserVm", ip.VMIP
	}
	return v
}

// disassociateIPAddress releases an address in the job, disabling its static
// NAT first; a source NAT address cannot be released unless its network is
// still Allocated (NetworkServiceImpl.releaseIpAddressInternal; its
// IllegalArgumentException fails the job with 530).
func disassociateIPAddress(c *Call) (*asyncJob, error) {
	p := c.Params
	var ip *model.PublicIP
	if id := p.Get("id"); id != "" {
		ip, _ = model.ByID(c.st.PublicIPs, id)
	} else if addr := p.Get("ipaddress"); addr != "" {
		for _, candidate := range c.st.PublicIPs {
			if candidate.Address == addr {
				ip = candidate
			}
		}
	}
	if ip == nil {
		return nil, paramError("Unable to find ip address by id")
	}
	return &asyncJob{instanceType: "IpAddress", instanceID: ip.ID,
		cmdClass: "org.apache.cloudstack.api.command.user.address.DisassociateIPAddrCmd",
		run: func() (any, error) {
			if ip.State == model.IPFree {
				return success(), nil // "is not allocated, so do nothing"
			}
			if n := c.st.Network(ip.NetworkID); ip.SourceNAT && n != nil && n.State != model.NetworkAllocated {
				return nil, internalError("ip address is used for source nat purposes and can not be disassociated.")
			}
			c.cleanupIPRules(ip) // IpAddressManagerImpl.cleanupIpResources
			removeTagsOf(c.st, "PublicIpAddress", ip.ID)
			ip.Release()
			c.changed()
			return success(), nil
		}}, nil
}

// networkString is NetworkVO's toString, as CloudStack's error texts show
// it. The simulator has one network offering, internal id 1.
func networkString(n *model.Network) string {
	return fmt.Sprintf(`Network {"id": %d, "name": "%s", "uuid": "%s", "networkofferingid": %d}`, n.InternalID, n.Name, n.ID, 1)
}
