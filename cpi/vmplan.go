package cpi

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// vmProps are a VM type's cloud_properties. Unknown keys are refused: a
// typo must not silently give a VM the wrong size.
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
	SecurityGroups        []string `json:"security_groups"`
	KeyPair               string   `json:"keypair"`
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
		return fmt.Errorf("%s cloud_properties: %s", what, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func readVMProps(cp apiv1.VMCloudProps) (vmProps, error) {
	var props vmProps
	if err := decodeStrict(cp, &props, "VM"); err != nil {
		return props, err
	}
	if props.CPU < 0 || props.RAM < 0 || props.EphemeralDiskSize < 0 || props.RootDiskSize < 0 {
		return props, fmt.Errorf("VM cloud_properties: cpu, ram and disk sizes must not be negative")
	}
	if (props.CPU > 0) != (props.RAM > 0) {
		return props, fmt.Errorf("VM cloud_properties: cpu and ram go together")
	}
	return props, nil
}

// nicPlan is one NIC to ask for, in CloudStack's order.
type nicPlan struct {
	name    string // the BOSH network
	net     apiv1.Network
	network cloudstack.Network
	mac     string
}

// networkPlan splits BOSH networks into NICs (manual and dynamic, the
// default-gateway network first) and at most one vip.
type networkPlan struct {
	nics    []nicPlan
	vip     apiv1.Network
	vipName string
}

// networkProps are a network's cloud_properties. Unknown keys are refused
// like VM and disk keys. undiscoverable is the earlier CloudStack CPIs'
// key, accepted in any form so their manifests keep working, and not
// acted on yet.
type networkProps struct {
	Name           string          `json:"name"`
	Undiscoverable json.RawMessage `json:"undiscoverable"`
}

func planNetworks(networks apiv1.Networks) (networkPlan, []string, error) {
	var plan networkPlan
	var refs []string
	names := make([]string, 0, len(networks))
	for n := range networks {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { // default gateway first, then by name
		gi, gj := networks[names[i]].IsDefaultFor("gateway"), networks[names[j]].IsDefaultFor("gateway")
		if gi != gj {
			return gi
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		net := networks[name]
		var cp networkProps
		if err := decodeStrict(net.CloudProps(), &cp, fmt.Sprintf("network %q", name)); err != nil {
			return plan, nil, err
		}
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
			if net.Type() == "manual" && net.IP() == "" {
				return plan, nil, fmt.Errorf("manual network %q has no ip", name)
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
			DNS: n.net.DNS(), Default: n.net.Default(), MAC: n.mac, Routes: []apiv1.Route{}}
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
			Routes: []apiv1.Route{}}
	}
	return out
}
