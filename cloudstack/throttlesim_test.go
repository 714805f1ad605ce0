package cloudstack_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// throttleFault makes the simulator refuse command's next n requests as
// CloudStack's throttle does, before the command runs.
func (s *replaySim) throttleFault(t *testing.T, command string, n int, hintMS int) {
	t.Helper()
	err := s.admin.AddFault(simulator.Fault{Command: command, Times: n, Stage: "request", ErrorCode: 429,
		CSErrorCode: 9999, ErrorText: "The given user has reached his/her account api limit, please retry after [" +
			strconv.Itoa(hintMS) + "] ms."})
	if err != nil {
		t.Fatal(err)
	}
}

// TestThrottledCreateVolumeThroughTheSimulator: through cloudstack-go and
// the simulator, a createVolume the throttle refused twice is sent again
// after the hinted waits and creates exactly one volume.
func TestThrottledCreateVolumeThroughTheSimulator(t *testing.T) {
	s := startReplaySim(t)
	c, clock, logs := throttledClient(t, s.api, 0, time.Minute)
	z := zone(t, c)
	offering, err := c.CustomDiskOffering()
	if err != nil {
		t.Fatal(err)
	}
	s.throttleFault(t, "createVolume", 2, 420)
	if _, err := c.CreateVolume("throttled-disk", z.ID, offering.ID, 1, nil); err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	if n := s.count(t, "createVolume"); n != 3 {
		t.Errorf("CloudStack received createVolume %d times, want 2 refused and 1 taken", n)
	}
	if waits, _ := clock.recorded(); !slices.Equal(waits, ms(420+250, 420+500)) {
		t.Errorf("waited %v", waits)
	}
	resp, err := s.ops.Volume.ListVolumes(s.ops.Volume.NewListVolumesParams())
	if err != nil || len(resp.Volumes) != 1 {
		t.Fatalf("want exactly one volume, got %v (%v)", resp, err)
	}
	assertNoSecrets(t, logs.String())
}

// TestThrottleBoundThroughTheSimulator: refused on every try, the call
// ends within request_timeout with the throttle's error.
func TestThrottleBoundThroughTheSimulator(t *testing.T) {
	s := startReplaySim(t)
	c, _, _ := throttledClient(t, s.api, 3, 5*time.Second)
	s.throttleFault(t, "listZones", 1000, 1000)
	_, err := c.FindZones([]string{"Sandbox-simulator"})
	if !cloudstack.IsThrottled(err) {
		t.Fatalf("want the throttle's error, got %v", err)
	}
}
