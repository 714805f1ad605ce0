package simtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

const key, secret = "simtest-key", "simtest-secret"

func zones(t *testing.T, s *simtest.Sim) int {
	t.Helper()
	c := csgo.NewClient(s.URL, key, secret, false)
	res, err := c.Zone.ListZones(c.Zone.NewListZonesParams())
	if err != nil {
		t.Fatalf("listZones at %s: %v", s.URL, err)
	}
	return res.Count
}

func TestServeAnswersInThisProcess(t *testing.T) {
	s := simtest.Serve(t, simulator.Options{AdminAPIKey: key, AdminSecretKey: secret})
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || s.URL != s.Base+"/client/api" {
		t.Fatalf("URL %s, Base %s", s.URL, s.Base)
	}
	if n := zones(t, s); n != 1 {
		t.Fatalf("listZones: %d zones, want the seeded one", n)
	}
	if n, err := s.Admin.CountRequests("listZones"); err != nil || n != 1 {
		t.Fatalf("the admin API counts %d listZones (%v), want 1", n, err)
	}
}

// TestProcessIsReadyAndStopsGracefully: the binary answers once Launch
// returns, and SIGTERM lets it save its state and exit cleanly.
func TestProcessIsReadyAndStopsGracefully(t *testing.T) {
	bin, err := simtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	p := simtest.Start(t, bin, "-admin-keys", key+":"+secret, "-state", state, "-job-latency", "0s", "-quiet")
	if n := zones(t, p.Sim); n != 1 {
		t.Fatalf("listZones: %d zones, want the seeded one", n)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("stopping with SIGTERM: %v", err)
	}
	if info, err := os.Stat(state); err != nil || info.Size() == 0 {
		t.Fatalf("no state saved on SIGTERM: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("stopping again: %v", err)
	}
	again := simtest.Start(t, bin, "-admin-keys", key+":"+secret, "-state", state, "-quiet")
	if n := zones(t, again.Sim); n != 1 {
		t.Fatalf("restarted on the saved state: %d zones", n)
	}
}

func TestLaunchSaysWhenTheBinaryDoesNotStart(t *testing.T) {
	bin, err := simtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p, err := simtest.Launch(bin, nil, "-no-such-flag"); err == nil || !strings.Contains(err.Error(), "exited before it listened") {
		if p != nil {
			_ = p.Stop()
		}
		t.Fatalf("a binary that exits at once: err = %v", err)
	}
}
