// Package vmtype is a BOSH VM type as the CPI reads it: the keys of its
// cloud_properties (Props, the one schema create_vm decodes and doctor
// checks) and the choice of the compute offering they run on (offering.go).
// cpi/ and doctor/ import it; it imports cloudstack/, config/ and
// internal/jsonwords, never cpi/. A new VM property is a field here, its use
// in cpi/, the job spec and the docs.
package vmtype

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// Props are a VM type's cloud_properties: ours, and the keys the earlier
// CloudStack CPIs read, with their meaning (the Java CPI's ResourcePool
// and the Go CPI's ResourceCloudProperties), so their VM types work
// unchanged.
type Props struct {
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
	Routes                Routes   `json:"routes"`

	// Disk is the earlier CPIs' name for ephemeral_disk_size (MiB).
	Disk *int `json:"disk"`
	// DiskOffering is decoded by the Go CPI from a VM type (its
	// ResourceCloudProperties embeds DiskCloudProperties) but never used
	// by its create_vm, whose ephemeral disk takes ephemeral_disk_offering
	// or the default: accepted, and ignored alike.
	DiskOffering string `json:"disk_offering"`
	// LBs are the Go CPI's load-balancer rules, with the VM behind them.
	LBs []LB `json:"lbs"`
}

// Routes are the Go CPI's extra routes by BOSH network name.
type Routes map[string][]Route

// Route is one extra route of a network.
type Route struct {
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway"` // empty: the network's gateway
}

// LB is one entry of the Go CPI's lbs: a public load-balancer rule on
// public_ip, created when missing, with the VM behind it.
type LB struct {
	Name         string         `json:"name"`
	Algorithm    string         `json:"algorithm"`
	PrivatePort  int            `json:"private_port"`
	PublicPort   int            `json:"public_port"`
	OpenFirewall jsonwords.Bool `json:"open_firewall"`
	PublicIP     string         `json:"public_ip"`
}

func (l LB) String() string {
	return fmt.Sprintf("lbs entry %q (public_ip %s)", l.Name, l.PublicIP)
}

// Custom says cpu and ram are given: the VM runs on a customized compute
// offering that takes them, not on a fixed one.
func (p Props) Custom() bool {
	return p.CPU > 0 && p.RAM > 0
}

// Read decodes cloud_properties as create_vm takes them, refusing unknown
// keys (a typo must not silently give a VM the wrong size) and what no VM
// can be given.
func Read(cp any) (Props, error) {
	var props Props
	if err := jsonwords.DecodeStrict(cp, &props, "VM"); err != nil {
		return props, err
	}
	if err := checkLBs(props.LBs); err != nil {
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
func (p *Props) mergeDisk() error {
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

// checkLBs refuses, before anything is asked of CloudStack, entries
// CloudStack would refuse: createPublicLoadBalancerRule's algorithm
// (NetUtils.isValidAlgorithm) and ports (NetUtils.isValidPort), a name
// (the rule's required name), and an address to put the rule on.
func checkLBs(lbs []LB) error {
	seen := map[string]bool{}
	for i, l := range lbs {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("VM cloud_properties: lbs[%d] (%q): %s", i, l.Name, fmt.Sprintf(format, args...))
		}
		addr, err := netip.ParseAddr(l.PublicIP)
		switch {
		case strings.TrimSpace(l.Name) == "":
			return fmt.Errorf("VM cloud_properties: lbs[%d] has no name", i)
		case !cloudstack.ValidLBAlgorithm(l.Algorithm):
			return bad("algorithm %q is not one CloudStack accepts: %s", l.Algorithm,
				strings.Join(cloudstack.LBAlgorithms, ", "))
		case l.PublicPort < 1 || l.PublicPort > 65535:
			return bad("public_port %d is not a port (1-65535)", l.PublicPort)
		case l.PrivatePort < 1 || l.PrivatePort > 65535:
			return bad("private_port %d is not a port (1-65535)", l.PrivatePort)
		case l.PublicIP == "":
			return bad("public_ip is missing: name the allocated public IP address the rule is on")
		case err != nil || !addr.Is4():
			return bad("public_ip %q is not an IPv4 address", l.PublicIP)
		case seen[l.PublicIP+" "+l.Name]:
			return bad("a second entry of that name on %s", l.PublicIP)
		}
		seen[l.PublicIP+" "+l.Name] = true
	}
	return nil
}
