package vm

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
)

// deployNetworks resolves networkids, iptonetworklist[i].networkid/ip/mac or
// the account's default isolated network, and the ipaddress/macaddress of
// the default (first) network.
func deployNetworks(c *kernel.Call, zone *model.Zone, owner *model.Account) ([]*nicPlan, error) {
	p := c.Params
	ipMap, ids := p.Map("iptonetworklist"), p.List("networkids")
	var plans []*nicPlan
	var err error
	switch {
	case len(ipMap) > 0:
		// BaseDeployVMCmd.getNetworkIds
		if len(ids) > 0 || p.Get("ipaddress") != "" || p.Get("ip6address") != "" {
			return nil, kernel.ParamError("ipToNetworkMap can't be specified along with networkIds or ipAddress")
		}
		if plans, err = ipToNetworkPlans(c, ipMap); err != nil {
			return nil, err
		}
	case len(ids) > 0:
		for _, id := range ids {
			plans = append(plans, &nicPlan{net: c.State.Network(id)})
		}
	default:
		if plans, err = defaultNetworkPlan(c, zone, owner); err != nil {
			return nil, err
		}
	}
	if len(ipMap) == 0 {
		mac, err := requestedMAC(p.Get("macaddress"))
		if err != nil {
			return nil, err
		}
		plans[0].ip, plans[0].mac = p.Get("ipaddress"), mac
	}
	for _, plan := range plans {
		if err := checkNICPlan(c, plan, zone, owner); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// defaultNetworkPlan is UserVmManagerImpl.createAdvancedVirtualMachine with
// no network named: the owner's one Isolated network that can be used (the
// project's with projectid: DeployVMCmd.getEntityOwnerId).
func defaultNetworkPlan(c *kernel.Call, zone *model.Zone, owner *model.Account) ([]*nicPlan, error) {
	var usable []*model.Network
	for _, n := range network.IsolatedNetworksOf(c.State, owner.ID, zone.ID) {
		if n.CanUseForDeploy() {
			usable = append(usable, n)
		}
	}
	switch len(usable) {
	case 0:
		return nil, kernel.ParamError("Unable to find a default network to start a vm for account %s; please specify networkIds", owner.Name)
	case 1:
		return []*nicPlan{{net: usable[0]}}, nil
	}
	return nil, kernel.ParamError("More than 1 default Isolated networks are found for account %s; please specify networkIds", owner.Name)
}

// checkNICPlan checks one NIC: its network exists, the owner may use it
// (checkNetworkPermission), it is in the zone, a requested
// address is IPv4 and a requested MAC is free on that network.
func checkNICPlan(c *kernel.Call, plan *nicPlan, zone *model.Zone, owner *model.Account) error {
	if plan.net == nil {
		return kernel.ParamError("Unable to find network by id")
	}
	if err := checkNetworkPermission(c, owner, plan.net); err != nil {
		return err
	}
	if plan.net.ZoneID != zone.ID {
		return kernel.ParamError("Network id=%s doesn't belong to zone %s", plan.net.ID, zone.ID)
	}
	if plan.ip != "" {
		if a, err := netip.ParseAddr(plan.ip); err != nil || !a.Is4() {
			return kernel.ParamError("Invalid specified IPv4 address %s", plan.ip)
		}
	}
	if plan.mac != "" && macInUse(c.State, plan.net.ID, plan.mac) {
		return kernel.ParamError("The requested Mac address is already taken! %s", plan.mac)
	}
	return nil
}

// ipToNetworkPlans is BaseDeployVMCmd.getIpToNetworkMap: a LinkedHashMap
// keyed by network, so a network named twice keeps its first place and
// takes the later entry's addresses (getNetworkIdFomIpMap,
// getIpAddressesFromIpMap).
func ipToNetworkPlans(c *kernel.Call, ipMap []map[string]string) ([]*nicPlan, error) {
	var plans []*nicPlan
	at := map[string]int{}
	for _, m := range ipMap {
		net := c.State.Network(m["networkid"])
		if net == nil || m["networkid"] == "" {
			return nil, kernel.ParamError("Unable to translate and find entity with networkId: %s", m["networkid"])
		}
		mac, err := requestedMAC(m["mac"])
		if err != nil {
			return nil, err
		}
		plan := &nicPlan{net: net, ip: m["ip"], mac: mac}
		if i, seen := at[net.ID]; seen {
			plans[i] = plan
			continue
		}
		at[net.ID] = len(plans)
		plans = append(plans, plan)
	}
	return plans, nil
}

// requestedMAC checks and standardizes a requested MAC address as
// BaseDeployVMCmd.getMacAddress does: NetUtils.isValidMac (six groups of one
// or two hex digits, case-insensitive, all separated by the same one of
// "-", ":" or "."), NetUtils.isUnicastMac (the first octet's lowest bit
// clear), then NetUtils.standardizeMacAddress (long2Mac: lower-case, two
// digits, colons).
func requestedMAC(mac string) (string, error) {
	if mac == "" {
		return "", nil
	}
	hw, ok := parseCloudStackMAC(mac)
	if !ok {
		return "", kernel.ParamError("Mac address is not valid: %s", mac)
	}
	if hw[0]&1 != 0 {
		return "", kernel.ParamError("Mac address is not unicast: %s", mac)
	}
	return hw.String(), nil
}

// parseCloudStackMAC accepts what NetUtils.isValidMac's pattern
// ^(?:[0-9a-f]{1,2}([-:\.]))(?:[0-9a-f]{1,2}\1){4}[0-9a-f]{1,2}$ accepts.
func parseCloudStackMAC(mac string) (net.HardwareAddr, bool) {
	sep := strings.IndexAny(mac, "-:.")
	if sep < 0 {
		return nil, false
	}
	parts := strings.Split(mac, mac[sep:sep+1])
	if len(parts) != 6 {
		return nil, false
	}
	hw := make(net.HardwareAddr, 6)
	for i, part := range parts {
		if len(part) < 1 || len(part) > 2 {
			return nil, false
		}
		v, err := strconv.ParseUint(part, 16, 8)
		if err != nil {
			return nil, false
		}
		hw[i] = byte(v)
	}
	return hw, true
}

// macInUse: a NIC's MAC is unique in its network (NicDaoImpl); the refusal
// text of deployNetworks is the simulator's, not found in the Java read.
func macInUse(st *model.State, networkID, mac string) bool {
	for _, vm := range st.VMs {
		if vm.Removed != nil {
			continue
		}
		for _, n := range vm.NICs {
			if n.NetworkID == networkID && strings.EqualFold(n.MACAddress, mac) {
				return true
			}
		}
	}
	return false
}

// nextMAC hands out the next unused 02:00:xx:xx:xx:xx address. Departure:
// NetworkModelImpl.getNextAvailableMacAddressInNetwork counts from the
// zone's mac address seed (06:xx:…) per network; any unicast, locally
// administered address serves the CPI, which only reads what it is given.
func nextMAC(st *model.State) string {
	for {
		st.Counters["mac"]++
		n := st.Counters["mac"]
		mac := fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		used := false
		for _, vm := range st.VMs {
			for _, nic := range vm.NICs {
				used = used || nic.MACAddress == mac
			}
		}
		if !used {
			return mac
		}
	}
}

// guestIPsInUse are the addresses of a network's NICs, VMs destroyed but
// not expunged included.
func guestIPsInUse(st *model.State, networkID string) map[string]bool {
	used := map[string]bool{}
	for _, vm := range st.VMs {
		if vm.Removed != nil {
			continue
		}
		for _, n := range vm.NICs {
			if n.NetworkID == networkID && n.IPAddress != "" {
				used[n.IPAddress] = true
			}
		}
	}
	return used
}

// allocateGuestIPs gives each planned NIC its address: GuestNetworkGuru.
// allocate calls IpAddressManagerImpl.acquireGuestIpAddress, where a
// requested address must not be the gateway, must be in the network's CIDR
// (NetUtils.sameSubnetCIDR) and not its network or broadcast address
// (IsIpEqualToNetworkOrBroadCastIp), and free (NetworkModelImpl.
// getAvailableIps); otherwise, and when the network is full, the guru throws
// InsufficientVirtualNetworkCapacityException "Unable to acquire Guest IP
// address for network <network>" (533). Unrequested addresses are picked
// at random among the free ones (rand.nextInt over getAvailableIps).
func allocateGuestIPs(c *kernel.Call, plans []*nicPlan) error {
	taken := map[string]map[string]bool{}
	for _, plan := range plans {
		if taken[plan.net.ID] == nil {
			taken[plan.net.ID] = guestIPsInUse(c.State, plan.net.ID)
		}
		ip := acquireGuestIP(plan.net, plan.ip, taken[plan.net.ID])
		if ip == "" {
			return &kernel.APIError{Code: kernel.CodeCapacity, CSCode: kernel.CsServerAPIException,
				Text: "Unable to acquire Guest IP address for network " + network.Describe(plan.net)}
		}
		plan.ip = ip
		taken[plan.net.ID][ip] = true
	}
	return nil
}

func acquireGuestIP(n *model.Network, requested string, taken map[string]bool) string {
	prefix, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return ""
	}
	prefix = prefix.Masked()
	broadcast := model.LastAddr(prefix)
	usable := func(a netip.Addr) bool {
		return prefix.Contains(a) && a != prefix.Addr() && a != broadcast && a.String() != n.Gateway && !taken[a.String()]
	}
	if requested != "" {
		a, err := netip.ParseAddr(requested)
		if err != nil || !usable(a) {
			return ""
		}
		return a.String()
	}
	var free []netip.Addr
	for a := prefix.Addr().Next(); a.IsValid() && a.Less(broadcast); a = a.Next() {
		if usable(a) {
			free = append(free, a)
		}
	}
	if len(free) == 0 {
		return ""
	}
	return free[mrand.IntN(len(free))].String()
}
