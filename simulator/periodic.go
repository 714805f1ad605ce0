package simulator

import "time"

// periodicTask is a management server thread scheduled with a fixed delay
// (ScheduledExecutorService.scheduleWithFixedDelay): the first run after
// first, then one every delay after the previous run ends, as
// StatsCollector.init schedules VmStatsCollector (vmstats.go) and
// UserVmManagerImpl.start the ExpungeTask (vmexpunge.go).
type periodicTask struct {
	stop chan struct{}
	done chan struct{}
}

// startPeriodic runs run on its own goroutine until stopPeriodic.
func startPeriodic(first, delay time.Duration, run func()) *periodicTask {
	task := &periodicTask{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(task.done)
		wait := first
		for {
			select {
			case <-time.After(wait):
				run()
			case <-task.stop:
				return
			}
			wait = delay
		}
	}()
	return task
}

// stopPeriodic stops the task and waits for a run in progress; nil is a no-op.
func (t *periodicTask) stopPeriodic() {
	if t != nil {
		close(t.stop)
		<-t.done
	}
}
