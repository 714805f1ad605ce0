package marks_test

import (
	"os"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

func TestTemplateMarkRoundTrip(t *testing.T) {
	until := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	incomplete := marks.Template{Director: "d-1", Incomplete: true, Owner: "42@director", Until: until}
	text := incomplete.Apply("BOSH stemcell s version 1 [not a mark]")
	if text != "BOSH stemcell s version 1 [not a mark] [bosh-director-uuid=d-1; bosh-cpi-incomplete=42@director until 2026-12-01T13:00:00Z]" {
		t.Fatalf("marked: %q", text)
	}
	got, ok := marks.ReadTemplate(text)
	if !ok || got != incomplete {
		t.Fatalf("read back %+v %v", got, ok)
	}
	done := marks.Template{Director: "d-1"}.Apply(text)
	if done != "BOSH stemcell s version 1 [not a mark] [bosh-director-uuid=d-1]" {
		t.Fatalf("published: %q", done)
	}
	if got, ok := marks.ReadTemplate(done); !ok || got.Incomplete || got.Director != "d-1" {
		t.Fatalf("published read back %+v %v", got, ok)
	}
	iso := marks.Template{Director: "d", Agent: "agent-1", ConfigDrive: true}
	if got, ok := marks.ReadTemplate(iso.Apply("BOSH config drive")); !ok || got != iso {
		t.Fatalf("agent and config drive read back %+v %v", got, ok)
	}
	for _, other := range []string{"", "an operator's template", "x [bosh-director-uuid=d-1", "[bosh-cpi-incomplete=1@h until x]"} {
		if m, ok := marks.ReadTemplate(other); ok {
			t.Errorf("%q read as marked: %+v", other, m)
		}
	}
	// An unreadable time is the zero time: long past.
	m, _ := marks.ReadTemplate("x [bosh-director-uuid=d; bosh-cpi-incomplete=1@h until soon]")
	if !m.Incomplete || !m.Until.IsZero() {
		t.Fatalf("%+v", m)
	}
}

// TestTemplateMarkRunning: a mark's call runs until its time is up, unless
// its process is gone from this host.
func TestTemplateMarkRunning(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	for _, c := range []struct {
		m    marks.Template
		want bool
	}{
		{marks.Template{Owner: marks.ThisProcess(), Until: now.Add(time.Minute)}, true},
		{marks.Template{Owner: "1@elsewhere", Until: now.Add(time.Minute)}, true},
		{marks.Template{Owner: "999999999@" + host, Until: now.Add(time.Minute)}, false},
		{marks.Template{Owner: marks.ThisProcess(), Until: now.Add(-time.Minute)}, false},
	} {
		if got := c.m.Running(now); got != c.want {
			t.Errorf("%+v Running = %v", c.m, got)
		}
	}
}
