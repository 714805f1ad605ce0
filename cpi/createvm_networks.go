package cpi

// create_vm's network plan: the director's networks as NICs in
// CloudStack's order, each with its MAC and the VM type's routes, and at
// most one vip.

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// nicPlan is one NIC to ask for, in CloudStack's order.
type nicPlan struct {
	name    string // the BOSH network
	net     apiv1.Network
	network cloudstack.Network
	mac     string
	routes  []route
}

// networkPlan splits BOSH networks into NICs (manual and dynamic, the
// default-gateway network first) and at most one vip.
type networkPlan struct {
	nics    []nicPlan
	vip     apiv1.Network
	vipName string
}

func planNetworks(networks apiv1.Networks) (networkPlan, []string, error) {
	var plan networkPlan
	var refs []string
	names := make([]string, 0, len(networks))
	props := map[string]cloudprops.Network{}
	for n, net := range networks {
		cp, err := cloudprops.ReadNetwork(net.CloudProps(), fmt.Sprintf("network %q", n))
		if err != nil {
			return plan, nil, err
		}
		names, props[n] = append(names, n), cp
	}
	// Discoverable networks first (the Go CPI's generateNetworksMap), then
	// the default gateway's, then by name.
	sort.Slice(names, func(i, j int) bool {
		ui, uj := bool(props[names[i]].Undiscoverable), bool(props[names[j]].Undiscoverable)
		if ui != uj {
			return uj
		}
		gi, gj := networks[names[i]].IsDefaultFor("gateway"), networks[names[j]].IsDefaultFor("gateway")
		if gi != gj {
			return gi
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		net, cp := networks[name], props[name]
		switch net.Type() {
		case "vip":
			if plan.vip != nil {
				return plan, nil, fmt.Errorf("networks %q: only one vip network per VM", name)
			}
			if net.IP() == "" {
				return plan, nil, fmt.Errorf("vip network %q has no ip", name)
			}
			plan.vip, plan.vipName = net, name
		case "manual", "dynamic":
			if cp.Name == "" {
				return plan, nil, fmt.Errorf("network %q: cloud_properties.name must name a CloudStack network", name)
			}
			if net.Type() == "manual" {
				if err := checkManualAddresses(name, net); err != nil {
					return plan, nil, err
				}
			}
			mac, err := randomMAC()
			if err != nil {
				return plan, nil, err
			}
			plan.nics = append(plan.nics, nicPlan{name: name, net: net, mac: mac})
			refs = append(refs, cp.Name)
		default:
			return plan, nil, fmt.Errorf("network %q has type %q; want manual, dynamic or vip", name, net.Type())
		}
	}
	if len(plan.nics) == 0 {
		return plan, nil, fmt.Errorf("a VM needs at least one manual or dynamic network")
	}
	return plan, refs, nil
}

// checkManualAddresses refuses a manual network whose addresses the VM
// could not use: its ip goes to CloudStack's deployVirtualMachine as an
// IPv4 address (iptonetworklist[].ip), and its netmask and gateway to the
// agent, which configures them as given.
func checkManualAddresses(name string, n apiv1.Network) error {
	if n.IP() == "" {
		return fmt.Errorf("manual network %q has no ip", name)
	}
	if !isIPv4(n.IP()) {
		return fmt.Errorf("manual network %q: ip %q is not an IPv4 address", name, n.IP())
	}
	if m := n.Netmask(); m != "" && !isIPv4Netmask(m) {
		return fmt.Errorf("manual network %q: netmask %q is not an IPv4 netmask like 255.255.255.0", name, m)
	}
	if gw := n.Gateway(); gw != "" && !isIPv4(gw) {
		return fmt.Errorf("manual network %q: gateway %q is not an IPv4 address", name, gw)
	}
	return nil
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv4Netmask: four octets whose ones all come before their zeros.
func isIPv4Netmask(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return false
	}
	_, bits := net.IPMask(a.AsSlice()).Size()
	return bits == 32
}

// randomMAC picks a locally administered unicast MAC, so the agent settings
// can name each NIC's MAC before CloudStack creates it.
func randomMAC() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]), nil
}

// addRoutes gives each NIC the routes the VM type names for its network,
// as the Go CPI's addRouteToNetworks does: a route without a gateway goes
// through the network's own.
func (p *networkPlan) addRoutes(byNet vmtype.Routes) error {
	for name, list := range byNet {
		i := slices.IndexFunc(p.nics, func(n nicPlan) bool { return n.name == name })
		if i < 0 {
			return fmt.Errorf("VM cloud_properties: routes name network %q, which is not a manual or dynamic network of this VM", name)
		}
		n := &p.nics[i]
		for _, rt := range list {
			r, err := agentRoute(rt, n.net.Gateway())
			if err != nil {
				return fmt.Errorf("VM cloud_properties: routes of network %q: %w", name, err)
			}
			n.routes = append(n.routes, r)
		}
	}
	return nil
}

// agentRoute is a route as the agent takes it: destination and netmask.
// The destination is the CIDR's network address; the Go CPI passes the
// address as written, which the agent's ip route refuses when host bits
// are set.
func agentRoute(rt vmtype.Route, gateway string) (route, error) {
	prefix, err := netip.ParsePrefix(rt.CIDR)
	if err != nil || !prefix.Addr().Is4() {
		return route{}, fmt.Errorf("cidr %q is not an IPv4 CIDR", rt.CIDR)
	}
	gw := rt.Gateway
	if gw == "" {
		gw = gateway
	}
	if addr, err := netip.ParseAddr(gw); err != nil || !addr.Is4() {
		return route{}, fmt.Errorf("route to %s: gateway %q is not an IPv4 address", rt.CIDR, gw)
	}
	mask := net.CIDRMask(prefix.Bits(), 32)
	return route{Destination: prefix.Masked().Addr().String(), Netmask: net.IP(mask).String(), Gateway: gw}, nil
}
