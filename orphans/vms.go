package orphans

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// survey is one look at CloudStack: the rows found so far and the VMs
// they hang on.
type survey struct {
	cloud Cloud
	o     Options
	rows  []Row
	vms   []*cloudstack.VM
	// listed are the VMs that are rows; spared the incomplete VMs that
	// are not (too young: their create_vm may still run).
	listed, spared map[string]*cloudstack.VM
	// keptRules counts, by public IP id, the load-balancer rules on it
	// that are not rows.
	keptRules map[string]int
	// detached are the data disks attached to no VM; listedDisks those
	// that are rows.
	detached, listedDisks map[string]bool
}

func (s *survey) run() error {
	var err error
	if s.vms, err = s.cloud.AllVMs(); err != nil {
		return err
	}
	s.listVMs()
	steps := []func() error{s.listLBRules, s.listAddresses, s.listISOs, s.listVolumes, s.listSnapshots, s.listTemplates}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (s *survey) add(r Row) { s.rows = append(s.rows, r) }

// listVMs finds the VMs whose create_vm never finished (their display name
// still carries the mark) and, against -known VM CIDs, the CPI's complete
// VMs the director does not know.
func (s *survey) listVMs() {
	s.listed, s.spared = map[string]*cloudstack.VM{}, map[string]*cloudstack.VM{}
	for _, vm := range s.vms {
		if vm.Expunged() {
			continue
		}
		row := Row{Kind: KindVM, ID: vm.ID, Name: vm.Name, Created: vm.Created, zoneID: vm.ZoneID}
		mark, incomplete := vm.IncompleteMark()
		switch {
		case incomplete && !s.o.old(vm.Created):
			s.spared[vm.ID] = vm
			continue
		case incomplete:
			row.Director, row.incomplete = mark.Director, true
			row.Why = fmt.Sprintf("create_vm for agent %s never finished (%s)", mark.Agent, vm.State)
		case vm.Tags[marks.DirectorTag] != "" && !vm.Gone() && s.o.Known.Unknown(KindVM, vm.ID) && s.o.old(vm.Created):
			row.Director = vm.Tags[marks.DirectorTag]
			row.Why = "the CPI's VM, unknown to the director (-known)"
		default:
			continue
		}
		s.listed[vm.ID] = vm
		s.add(row)
	}
}

// intending is the incomplete VM whose create_vm recorded the intent to
// acquire the address, and whether that VM is listed (else it is spared).
func (s *survey) intending(addr *cloudstack.PublicIP) (*cloudstack.VM, bool) {
	for i, group := range []map[string]*cloudstack.VM{s.listed, s.spared} {
		for _, vm := range group {
			if m, ok := vm.IncompleteMark(); ok && m.VIP == addr.IP && addr.AcquiredFor(vm) {
				return vm, i == 0
			}
		}
	}
	return nil, false
}

// listAddresses finds the public IPs the CPI acquired that no VM the
// director can reach holds: static NAT to a listed VM, intended by a
// listed VM's create_vm, or acquired (tagged) and static NAT to nothing
// with no rule on it that stays (someone load-balances it).
func (s *survey) listAddresses() error {
	addrs, err := s.cloud.AllocatedPublicIPs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if a.SourceNAT {
			continue
		}
		row := Row{Kind: KindPublicIP, ID: a.ID, Name: a.IP, Created: a.Allocated, incomplete: true}
		if a.VMID != "" {
			vm := s.listed[a.VMID]
			if vm == nil || !a.AcquiredFor(vm) {
				continue
			}
			row.Director, row.Why = directorOf(vm), "acquired for a VM listed here"
			s.add(row)
			continue
		}
		vm, listed := s.intending(a)
		switch {
		case vm != nil && listed:
			row.Director, row.Why = directorOf(vm), "acquired for a VM listed here, untagged"
		case vm != nil:
			continue // that create_vm may still run
		case a.Tags[marks.AcquiredTag] == "true" && s.o.old(a.Allocated) && s.keptRules[a.ID] == 0:
			row.Why = "acquired by the CPI; static NAT to no VM"
		default:
			continue
		}
		s.add(row)
	}
	return nil
}

// directorOf is the director a VM's marks name.
func directorOf(vm *cloudstack.VM) string {
	if m, ok := vm.IncompleteMark(); ok {
		return m.Director
	}
	return vm.Tags[marks.DirectorTag]
}

// listLBRules finds the load-balancer rules the CPI created (their
// description carries its mark) that only listed VMs are behind, or none
// is and no create_vm that may still run made: the last VM's delete_vm
// would have deleted them.
func (s *survey) listLBRules() error {
	rules, err := s.cloud.AllLBRules()
	if err != nil {
		return err
	}
	s.keptRules = map[string]int{}
	for _, r := range rules {
		s.keptRules[r.PublicIPID]++
		mark, ok := r.Mark()
		if !ok {
			continue
		}
		members, err := s.cloud.LBRuleVMs(r.ID)
		if err != nil {
			return err
		}
		if !s.allListed(members) || len(members) == 0 && s.madeBySpared(mark) {
			continue
		}
		s.keptRules[r.PublicIPID]--
		why := "the CPI's rule; no VM behind it"
		if len(members) > 0 {
			why = fmt.Sprintf("the CPI's rule; behind it only VMs listed here (%d)", len(members))
		}
		s.add(Row{Director: mark.Director, Kind: KindLBRule, ID: r.ID, Name: r.Name + " on " + r.PublicIP, Why: why,
			incomplete: true})
	}
	return nil
}

func (s *survey) allListed(ids []string) bool {
	for _, id := range ids {
		if s.listed[id] == nil {
			return false
		}
	}
	return true
}

// madeBySpared says a create_vm that may still run made the rule: it
// creates its rules after its VM, which carries the same agent in its
// incomplete mark until the call ends.
func (s *survey) madeBySpared(m marks.LB) bool {
	for _, vm := range s.spared {
		if vm.Gone() {
			continue
		}
		if own, _ := vm.IncompleteMark(); own.Director == m.Director && own.Agent == m.Agent {
			return true
		}
	}
	return false
}
