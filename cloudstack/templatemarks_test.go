package cloudstack_test

import (
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func TestTemplateMarkRoundTrip(t *testing.T) {
	until := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	incomplete := cloudstack.TemplateMark{Director: "d-1", Incomplete: true, Owner: "42@director", Until: until}
	text := incomplete.Apply("BOSH stemcell s version 1 [not a mark]")
	if text != "BOSH stemcell s version 1 [not a mark] [bosh-director-uuid=d-1; bosh-cpi-incomplete=42@director until 2026-12-01T13:00:00Z]" {
		t.Fatalf("marked: %q", text)
	}
	got, ok := cloudstack.Template{DisplayText: text}.Mark()
	if !ok || got != incomplete {
		t.Fatalf("read back %+v %v", got, ok)
	}
	done := cloudstack.TemplateMark{Director: "d-1"}.Apply(text)
	if done != "BOSH stemcell s version 1 [not a mark] [bosh-director-uuid=d-1]" {
		t.Fatalf("published: %q", done)
	}
	if got, ok := (cloudstack.Template{DisplayText: done}).Mark(); !ok || got.Incomplete || got.Director != "d-1" {
		t.Fatalf("published read back %+v %v", got, ok)
	}
	for _, other := range []string{"", "an operator's template", "x [bosh-director-uuid=d-1", "[bosh-cpi-incomplete=1@h until x]"} {
		if m, ok := (cloudstack.Template{DisplayText: other}).Mark(); ok {
			t.Errorf("%q read as marked: %+v", other, m)
		}
	}
	// An unreadable time is the zero time: long past.
	m, _ := cloudstack.Template{DisplayText: "x [bosh-director-uuid=d; bosh-cpi-incomplete=1@h until soon]"}.Mark()
	if !m.Incomplete || !m.Until.IsZero() {
		t.Fatalf("%+v", m)
	}
}
