package simulator

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/vm"
)

// expungeDelay is the expunge.delay global setting (Config.ExpungeDelay):
// how long a Destroyed VM keeps its addresses and host name before the
// expunge thread removes it.
func expungeDelay(st *model.State) time.Duration {
	return time.Duration(st.SettingInt(model.SettingExpungeDelay)) * time.Second
}

// expungeInterval is the expunge.interval global setting
// (Config.ExpungeInterval): how often the expunge thread runs.
func expungeInterval(st *model.State) time.Duration {
	return time.Duration(st.SettingInt(model.SettingExpungeInterval)) * time.Second
}

// startExpungeTask starts UserVmManagerImpl's ExpungeTask: scheduled with a
// fixed delay of expunge.interval (first run one interval after start), it
// expunges the VMs that have been Destroyed or in Error since before
// now - expunge.delay. Both settings are read once, when the management
// server starts (UserVmManagerImpl.configure, start); Options.ExpungeInterval
// and ExpungeDelay preset them.
func (s *Server) startExpungeTask() {
	interval, delay := expungeInterval(s.State), expungeDelay(s.State)
	s.expunger = startPeriodic(interval, interval, func() { s.expungeDestroyed(delay) })
}

// stopExpungeTask stops the thread and waits for a run in progress.
func (s *Server) stopExpungeTask() {
	s.expunger.stopPeriodic()
	s.expunger = nil
}

// expungeDestroyed is one run of ExpungeTask: UserVmDao.findDestroyedVms
// with the cut-off now - (expunge.delay << 10) milliseconds (the Java shifts
// the seconds by 10 bits, so a delay of n seconds waits n x 1.024 s), then
// expunge for each. Expunging is left out: in the simulator a VM is only
// Expunging while its own expunge job runs.
func (s *Server) expungeDestroyed(delay time.Duration) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed {
		return
	}
	cutoff := s.Now().Add(-time.Duration(int64(delay/time.Second)<<10) * time.Millisecond)
	system := &kernel.Call{Command: "expungeVirtualMachine", Engine: s.Engine, State: s.State} // the system account's task
	for _, inst := range s.State.VMs {
		if inst.Removed == nil && (inst.State == model.VMDestroyed || inst.State == model.VMError) && inst.UpdateTime.Before(cutoff) {
			vm.ExpungeVM(system, inst)
		}
	}
	s.Persist()
}
