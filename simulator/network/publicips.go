package network

import (
	"fmt"
	"net/netip"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// String is IPAddressVO's toString, as CloudStack's error texts show it.
func ipString(st *model.State, ip *model.PublicIP) string {
	zone := int64(0)
	if z := st.Zone(ip.ZoneID); z != nil {
		zone = z.InternalID
	}
	return fmt.Sprintf("Ip[%s-%d]", ip.Address, zone)
}

// publicIPCommands are the commands of publicips.go (registerCommands).
func publicIPCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "associateIpAddress", Async: associateIPAddress},
		{Name: "listPublicIpAddresses", IDKind: model.KindPublicIP, Sync: listPublicIPAddresses},
		{Name: "disassociateIpAddress", IDKind: model.KindPublicIP, Async: disassociateIPAddress},
	}
}

// PublicIPOwner is the taggable for PublicIpAddress: the account owning the resource a tag names.
func PublicIPOwner(st *model.State, id string) (string, bool) {
	ip, ok := model.ByID(st.PublicIPs, id)
	if !ok || ip.State == model.IPFree {
		return "", false
	}
	return ip.AccountID, true
}

// ensurePublicIPs gives every address of the public ranges its row and every
// implemented isolated network its source NAT address (CloudStack takes it
// when the network is implemented; the seeded network is). Older state
// files get them on first use.
func ensurePublicIPs(c *kernel.Call) {
	for _, r := range c.State.VlanRanges {
		if hasIPsOf(c.State, r.ID) {
			continue
		}
		start, err1 := netip.ParseAddr(r.StartIP)
		end, err2 := netip.ParseAddr(r.EndIP)
		if err1 != nil || err2 != nil {
			continue
		}
		for a := start; a.Compare(end) <= 0; a = a.Next() {
			id, internal := c.State.NewID(model.KindPublicIP)
			c.State.PublicIPs = append(c.State.PublicIPs, &model.PublicIP{ID: id, InternalID: internal, Address: a.String(),
				ZoneID: r.ZoneID, VlanRangeID: r.ID, State: model.IPFree})
		}
		c.Changed()
	}
	for _, n := range c.State.Networks {
		// NetworkOrchestrator.implementNetworkElementsAndResources: only a
		// network whose offering has SourceNat gets the address.
		// A VPC tier has none: its VPC's router has the VPC's (StartVPC).
		if n.Type != "Isolated" || n.VPCID != "" || n.State != model.NetworkImplemented || sourceNATOf(c.State, n.ID) != nil ||
			!Provides(c.State, n, "SourceNat") {
			continue
		}
		if ip := freePublicIP(c.State, n.ZoneID, ""); ip != nil {
			allocatePublicIP(c, ip, n.AccountID)
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

func allocatePublicIP(c *kernel.Call, ip *model.PublicIP, accountID string) {
	now := c.Engine.Now()
	ip.State, ip.AccountID, ip.Allocated = model.IPAllocating, accountID, &now
	c.Changed()
}

// IsolatedNetworksOf are an account's isolated networks in a zone.
func IsolatedNetworksOf(st *model.State, accountID, zoneID string) []*model.Network {
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
func associateIPAddress(c *kernel.Call) (*kernel.AsyncJob, error) {
	ensurePublicIPs(c)
	p := c.Params
	owner, err := c.Owner() // AssociateIPAddrCmd.getEntityOwnerId: the project's account with projectid
	if err != nil {
		return nil, err
	}
	if p.Get("vpcid") != "" {
		return associateIPToVPC(c, owner)
	}
	net := c.State.Network(p.Get("networkid"))
	zoneID := p.Get("zoneid")
	switch {
	case net != nil:
		zoneID = net.ZoneID
	case zoneID == "":
		return nil, kernel.ParamError("Unable to figure out zone to assign IP to. Please specify either zoneId, or networkId, or vpcId in the call") // AssociateIPAddrCmd.getZoneId
	default:
		nets := IsolatedNetworksOf(c.State, owner.ID, zoneID)
		switch len(nets) {
		case 0:
			return nil, kernel.ParamError("Account name=%s domain=%s doesn't have virtual networks in zone=%s",
				owner.Name, c.State.Domain(owner.DomainID).Name, c.State.Zone(zoneID).Name)
		case 1:
			net = nets[0]
		default:
			return nil, kernel.ParamError("Account has more than one isolated network in the zone")
		}
	}
	if err := checkSharedForIPs(c.State, net); err != nil {
		return nil, err
	}
	return associateJob(c, zoneID, owner, func(ip *model.PublicIP) *kernel.APIError {
		if net.VPCID != "" { // NetworkServiceImpl.associateIPToNetwork
			return kernel.ParamError("Can't assign ip to the network directly when network belongs to VPC.Specify vpcId to associate ip address to VPC")
		}
		if err := checkIsolatedForIPs(c.State, net); err != nil {
			return err
		}
		ip.State, ip.NetworkID = model.IPAllocated, net.ID
		// isSourceNatAvailableForNetwork: the first address of an Isolated
		// network without a source NAT address (one never implemented)
		// becomes its source NAT.
		ip.SourceNAT = net.Type == "Isolated" && sourceNATOf(c.State, net.ID) == nil // no portable IPs here
		return nil
	})
}

// associateJob takes the free address requested (or the zone's lowest) at
// once and answers the job that finishes it with finish, releasing the
// address when the job fails (associateIPToGuestNetwork's releaseOnFailure).
// The owner is the caller's account, or the project's with projectid.
func associateJob(c *kernel.Call, zoneID string, owner *model.Account, finish func(*model.PublicIP) *kernel.APIError) (*kernel.AsyncJob, error) {
	ip := freePublicIP(c.State, zoneID, c.Params.Get("ipaddress"))
	if ip == nil {
		return nil, &kernel.APIError{Code: kernel.CodeCapacity, CSCode: kernel.CsServerAPIException, Text: "Insufficient address capacity"}
	}
	allocatePublicIP(c, ip, owner.ID)
	return &kernel.AsyncJob{InstanceType: "IpAddress", InstanceID: ip.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.address.AssociateIPAddrCmdByAdmin",
		Run: func() (any, error) {
			if err := finish(ip); err != nil {
				return nil, err
			}
			c.Changed()
			return map[string]any{"ipaddress": views.PublicIPView(c, ip)}, nil
		},
		Fail: func(*kernel.APIError) { ip.Release() },
	}, nil
}

// associateIPToVPC is AssociateIPAddrCmd with vpcid: the zone is the
// VPC's (getZoneId), the address is taken at once (allocateIP) and the job
// gives it to the VPC, no tier yet (VpcManagerImpl.associateIPToVpc): the
// VPC's source NAT address when the VPC has none and its offering
// provides SourceNat (isSrcNatIpRequired).
func associateIPToVPC(c *kernel.Call, owner *model.Account) (*kernel.AsyncJob, error) {
	v := c.State.VPC(c.Params.Get("vpcid"))
	if v == nil {
		return nil, kernel.ParamError("Unable to figure out zone to assign IP to. Please specify either zoneId, or networkId, or vpcId in the call")
	}
	return associateJob(c, v.ZoneID, owner, func(ip *model.PublicIP) *kernel.APIError {
		o, _ := model.ByID(c.State.VPCOfferings, v.OfferingID)
		ip.SourceNAT = o != nil && o.Has("SourceNat") && vpcSourceNAT(c.State, v.ID) == nil
		ip.State, ip.VPCID = model.IPAllocated, v.ID
		return nil
	})
}

// checkSharedForIPs is NetworkServiceImpl.allocateIP's refusal at create:
// in an advanced zone a Shared network takes public addresses only if its
// offering has a service that uses them.
func checkSharedForIPs(st *model.State, n *model.Network) *kernel.APIError {
	if n.Type != "Shared" || sharedOfferingWithServices(st.NetworkOffering(n.OfferingID)) {
		return nil
	}
	return kernel.ParamError("Associate IP address can only be called on the shared networks in the advanced zone" +
		" with Firewall/Source Nat/Static Nat/Port Forwarding/Load balancing services enabled")
}

// checkIsolatedForIPs is IpAddressManagerImpl.associateIPToGuestNetwork's
// refusal in the job: an Isolated network takes public addresses only with
// the SourceNat service (the address is then unassigned). Its check of a
// Shared network repeats allocateIP's, which refused at create already.
func checkIsolatedForIPs(st *model.State, n *model.Network) *kernel.APIError {
	if n.Type != "Isolated" || Provides(st, n, "SourceNat") {
		return nil
	}
	return kernel.ParamError("In zone of type Advanced ip address can be associated only to the network of guest type Isolated with the SourceNat enabled")
}

// listPublicIPAddresses is ManagementServerImpl.searchForIPAddresses: allocated
// addresses unless allocatedonly=false; vpcid those of a VPC.
func listPublicIPAddresses(c *kernel.Call) (any, error) {
	ensurePublicIPs(c)
	l := kernel.Lister[*model.PublicIP]{Key: "publicipaddress", ID: (*model.PublicIP).UUID,
		Keyword: func(ip *model.PublicIP) []string { return []string{ip.Address} },
		Zone:    func(ip *model.PublicIP) string { return ip.ZoneID }, View: views.PublicIPView,
		Owner: func(ip *model.PublicIP) string { return ip.AccountID }} // IPAddressVO's allocated account
	p := c.Params
	return l.Run(c, c.State.PublicIPs, func(ip *model.PublicIP) bool {
		return (!p.Bool("allocatedonly", true) || ip.State != model.IPFree) && kernel.OptEq(p.Get("ipaddress"), ip.Address) &&
			kernel.OptEq(p.Get("associatednetworkid"), ip.NetworkID) && kernel.OptEq(p.Get("vlanid"), ip.VlanRangeID) &&
			kernel.OptEq(p.Get("vpcid"), ip.VPCID) &&
			kernel.OptEq(p.Get("state"), ip.State) && p.Bool("forvirtualnetwork", true) && !p.Bool("forsystemvms", false) &&
			(!p.Has("isstaticnat") || p.Bool("isstaticnat", false) == ip.StaticNAT) &&
			(!p.Has("issourcenat") || p.Bool("issourcenat", false) == ip.SourceNAT) &&
			tag.TaggedWith(c.State, "PublicIpAddress", ip.ID, p.Map("tags"))
	})
}

// disassociateIPAddress releases an address in the job, disabling its static
// NAT first; a source NAT address cannot be released unless its network is
// still Allocated (NetworkServiceImpl.releaseIpAddressInternal; its
// IllegalArgumentException fails the job with 530).
func disassociateIPAddress(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	var ip *model.PublicIP
	if id := p.Get("id"); id != "" {
		ip, _ = model.ByID(c.State.PublicIPs, id)
	} else if addr := p.Get("ipaddress"); addr != "" {
		for _, candidate := range c.State.PublicIPs {
			if candidate.Address == addr {
				ip = candidate
			}
		}
	}
	if ip == nil {
		return nil, kernel.ParamError("Unable to find ip address by id")
	}
	return &kernel.AsyncJob{InstanceType: "IpAddress", InstanceID: ip.ID,
		CmdClass: "org.apache.cloudstack.api.command.user.address.DisassociateIPAddrCmd",
		Run: func() (any, error) {
			if ip.State == model.IPFree {
				return kernel.Success(), nil // "is not allocated, so do nothing"
			}
			if n := c.State.Network(ip.NetworkID); ip.SourceNAT && n != nil && n.State != model.NetworkAllocated {
				return nil, kernel.InternalError("ip address is used for source nat purposes and can not be disassociated.")
			}
			cleanupIPRules(c, ip) // IpAddressManagerImpl.cleanupIpResources
			tag.RemoveTagsOf(c.State, "PublicIpAddress", ip.ID)
			ip.Release()
			c.Changed()
			return kernel.Success(), nil
		}}, nil
}

// Describe is NetworkVO's toString, as CloudStack's error texts show
// it. The simulator has one network offering, internal id 1.
func Describe(n *model.Network) string {
	return fmt.Sprintf(`Network {"id": %d, "name": "%s", "uuid": "%s", "networkofferingid": %d}`, n.InternalID, n.Name, n.ID, 1)
}
