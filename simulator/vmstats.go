package simulator

import (
	"cmp"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// statsInitialDelay is StatsCollector's DEFAULT_INITIAL_DELAY: the VM stats
// collector first runs 15 s after the management server starts.
const statsInitialDelay = 15 * time.Second

// startVMStatsCollector starts StatsCollector's VmStatsCollector as
// StatsCollector.init schedules it: with a fixed delay of
// vm.stats.interval (Config.VmStatsInterval, milliseconds, read once at
// start), first after DEFAULT_INITIAL_DELAY; not at all when the interval is
// 0 or less ("Skipping collect VM stats"). Options.VMStatsInitialDelay
// stands in for the initial delay in tests.
func (s *Server) startVMStatsCollector() {
	interval := time.Duration(s.State.SettingInt(model.SettingVMStatsInterval)) * time.Millisecond
	if interval <= 0 {
		return
	}
	s.vmStats = startPeriodic(cmp.Or(s.opts.VMStatsInitialDelay, statsInitialDelay), interval, s.collectVMStats)
}

// collectVMStats is one run of VmStatsCollector: every Running VM
// (getVmMapForStatsForHost: VMInstanceDao.listByHostAndState Running) gets
// its host's GetVmStatsCommand answer recorded (vm_stats), which
// UserVmJoinDaoImpl.newUserVmResponse shows from then on. The simulator's
// hosts answer as the CloudStack simulator's mock agent does
// (MockVmManagerImpl.getVmStats: 10 % CPU, 32768 KB read and 16384 KB
// written on the network, nothing else), and StatsCollector.getVmStats
// accumulates the collections (vm.stats.increment.metrics), as a real
// management server's recorded listVirtualMachines shows (31 runs: 1015808
// and 507904 KB). Departure: the stats are never cleaned up
// (VmStatsCleaner, vm.stats.max.retention.time).
func (s *Server) collectVMStats() {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed {
		return
	}
	for _, vm := range s.State.VMs {
		if vm.Removed != nil || vm.State != model.VMRunning {
			continue
		}
		if vm.Stats == nil {
			vm.Stats = &model.VMStats{}
		}
		vm.Stats.CPUUtilization = 10
		vm.Stats.NetworkReadKBs += 32768
		vm.Stats.NetworkWriteKBs += 16384
		s.Dirty = true
	}
	s.Persist()
}
