package cpi

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// vmProps are a VM type's cloud_properties: ours, and the keys the earlier
// CloudStack CPIs read, with their meaning (the Java CPI's ResourcePool
// and the Go CPI's ResourceCloudProperties), so their VM types work
// unchanged. Unknown keys are refused: a typo must not silently give a
// VM the wrong size.
type vmProps struct {
	ComputeOffering       string   `json:"compute_offering"`
	CPU                   int      `json:"cpu"`
	RAM                   int      `json:"ram"` // MiB
	CPUSpeed              int      `json:"cpu_speed"`
	RootDiskSize          int      `json:"root_disk_size"`      // MiB
	EphemeralDiskSize     int      `json:"ephemeral_disk_size"` // MiB
	EphemeralDiskOffering string   `json:"ephemeral_disk_offering"`
	Zone                  string   `json:"zone"`
	AffinityGroup         string   `json:"affinity_group"`
	AffinityGroupType     string   `json:"affinity_group_type"`
	SecurityGroups        []string `json:"security_groups"`
	KeyPair               string   `json:"keypair"`
	Routes                routes   `json:"routes"`

	// Disk is the earlier CPIs' name for ephemeral_disk_size (MiB).
	Disk *int `json:"disk"`
	// DiskOffering is decoded by the Go CPI from a VM type (its
	// ResourceCloudProperties embeds DiskCloudProperties) but never used
	// by its create_vm, whose ephemeral disk takes ephemeral_disk_offering
	// or the default: accepted, and ignored alike.
	DiskOffering string `json:"disk_offering"`
	// LBs are the Go CPI's load-balancer rules, with the VM behind them.
	LBs []lbProp `json:"lbs"`
}

// routes are the Go CPI's extra routes by BOSH network name.
type routes map[string][]routeProp

type routeProp struct {
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway"` // empty: the network's gateway
}

// decodeStrict reads cloud_properties into v, refusing keys v has no field
// for: a typo must not silently give a VM or disk the wrong size.
func decodeStrict(cp any, v any, what string) error {
	raw, err := json.Marshal(cp)
	if err != nil || string(raw) == "null" {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonwords.In(what+" cloud_properties", err)
	}
	return nil
}

func readVMProps(cp apiv1.VMCloudProps) (vmProps, error) {
	var props vmProps
	if err := decodeStrict(cp, &props, "VM"); err != nil {
		return props, err
	}
	if err := checkLBProps(props.LBs); err != nil {
		return props, err
	}
	if err := props.mergeDisk(); err != nil {
		return props, err
	}
	if props.CPU < 0 || props.RAM < 0 || props.EphemeralDiskSize < 0 || props.RootDiskSize < 0 {
		return props, fmt.Errorf("VM cloud_properties: cpu, ram and disk sizes must not be negative")
	}
	if (props.CPU > 0) != (props.RAM > 0) {
		return props, fmt.Errorf("VM cloud_properties: cpu and ram go together")
	}
	if t := props.AffinityGroupType; t != "" && !slices.Contains(config.AffinityGroupTypes, t) {
		return props, fmt.Errorf("VM cloud_properties: affinity_group_type is %q; want one of %q", t, config.AffinityGroupTypes)
	}
	return props, nil
}

// mergeDisk folds the earlier CPIs' disk into ephemeral_disk_size: either
// names the ephemeral disk's size, and two different sizes are a mistake.
func (p *vmProps) mergeDisk() error {
	if p.Disk == nil {
		return nil
	}
	if p.EphemeralDiskSize != 0 && p.EphemeralDiskSize != *p.Disk {
		return fmt.Errorf("VM cloud_properties: disk (%d MiB) and ephemeral_disk_size (%d MiB) both size the "+
			"ephemeral disk and differ: give one", *p.Disk, p.EphemeralDiskSize)
	}
	p.EphemeralDiskSize = *p.Disk
	return nil
}

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

// networkProps are a network's cloud_properties. Unknown keys are refused
// like VM and disk keys. undiscoverable is the Go CPI's key: such a
// network is not the VM's first NIC, which CloudStack makes its default
// one, unless every network is undiscoverable.
type networkProps struct {
	Name           string    `json:"name"`
	Undiscoverable flexibool `json:"undiscoverable"`
}

// flexibool is a boolean a manifest may also give as "true" or "false".
type flexibool bool

func (b *flexibool) UnmarshalJSON(raw []byte) error {
	if string(raw) == "null" {
		return nil
	}
	v, err := strconv.ParseBool(strings.Trim(string(raw), `"`))
	if err != nil {
		return fmt.Errorf("want true or false, not %s", raw)
	}
	*b = flexibool(v)
	return nil
}

func planNetworks(networks apiv1.Networks) (networkPlan, []string, error) {
	var plan networkPlan
	var refs []string
	names := make([]string, 0, len(networks))
	props := map[string]networkProps{}
	for n, net := range networks {
		var cp networkProps
		if err := decodeStrict(net.CloudProps(), &cp, fmt.Sprintf("network %q", n)); err != nil {
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

// newVMName is a host name CloudStack accepts: a letter first, letters,
// digits and hyphens, 39 characters.
func newVMName() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("vm-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// agentNetworks turns the plan into the agent's networks, with the MACs
// CloudStack will give the NICs.
func (p networkPlan) agentNetworks() map[string]networkSettings {
	out := map[string]networkSettings{}
	for _, n := range p.nics {
		s := networkSettings{Type: n.net.Type(), IP: n.net.IP(), Netmask: n.net.Netmask(), Gateway: n.net.Gateway(),
			DNS: n.net.DNS(), Default: n.net.Default(), MAC: n.mac, Routes: n.routes}
		if s.Routes == nil {
			s.Routes = []route{}
		}
		if s.DNS == nil {
			s.DNS = n.network.DNS
		}
		if n.net.IsDynamic() {
			s.IP, s.Netmask, s.Gateway = "", "", ""
			s.UseDHCP = true
		}
		out[n.name] = s
	}
	if p.vip != nil {
		out[p.vipName] = networkSettings{Type: "vip", IP: p.vip.IP(), DNS: []string{}, Default: []string{},
			Routes: []route{}}
	}
	return out
}

// addRoutes gives each NIC the routes the VM type names for its network,
// as the Go CPI's addRouteToNetworks does: a route without a gateway goes
// through the network's own.
func (p *networkPlan) addRoutes(byNet routes) error {
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
func agentRoute(rt routeProp, gateway string) (route, error) {
	prefix, err := netip.ParsePrefix(rt.CIDR)
	if err != nil || !prefix.Addr().Is4() {
		return route{}, fmt.Errorf("cidr %q is not an IPv4 CIDR", rt.CIDR)
	}
	gw := firstOf(rt.Gateway, gateway)
	if addr, err := netip.ParseAddr(gw); err != nil || !addr.Is4() {
		return route{}, fmt.Errorf("route to %s: gateway %q is not an IPv4 address", rt.CIDR, gw)
	}
	mask := net.CIDRMask(prefix.Bits(), 32)
	return route{Destination: prefix.Masked().Addr().String(), Netmask: net.IP(mask).String(), Gateway: gw}, nil
}
