package cpi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// fakeCloud is the CloudStack layer as the CPI methods see it.
type fakeCloud struct {
	vms     map[string]*cloudstack.VM
	err     error
	lookups []string
}

func (f *fakeCloud) FindVM(ref string) (*cloudstack.VM, error) {
	f.lookups = append(f.lookups, ref)
	return f.vms[ref], f.err
}

func newCPI(t *testing.T, cloud cloudstack.API, context string) apiv1.CPI {
	t.Helper()
	var ctx apiv1.CloudPropsImpl
	if err := json.Unmarshal([]byte(context), &ctx); err != nil {
		t.Fatal(err)
	}
	c, err := cpi.NewFactory(config.Config{}, cloud, boshlog.NewLogger(boshlog.LevelNone)).New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInfoAdvertisesStemcellFormats(t *testing.T) {
	info, err := newCPI(t, &fakeCloud{}, `{}`).Info()
	if err != nil || len(info.StemcellFormats) == 0 || info.StemcellFormats[0] != "cloudstack-vhdx" {
		t.Fatalf("%+v %v", info, err)
	}
}

func TestHasVM(t *testing.T) {
	cloud := &fakeCloud{vms: map[string]*cloudstack.VM{
		"running":   {ID: "running", State: "Running"},
		"stopped":   {ID: "stopped", State: "Stopped"},
		"destroyed": {ID: "destroyed", State: "Destroyed"},
		"expunging": {ID: "expunging", State: "Expunging"},
	}}
	c := newCPI(t, cloud, `{"director_uuid":"d"}`)
	for cid, want := range map[string]bool{"running": true, "stopped": true, "destroyed": false, "expunging": false, "absent": false} {
		got, err := c.HasVM(apiv1.NewVMCID(cid))
		if err != nil || got != want {
			t.Errorf("has_vm(%s) = %v, %v; want %v", cid, got, err, want)
		}
	}
}

func TestHasVMErrorIsACloudErrorNamingTheVM(t *testing.T) {
	cloud := &fakeCloud{err: &cloudstack.UnreachableError{Endpoint: "http://cs/client/api", Err: errors.New("refused")}}
	_, err := newCPI(t, cloud, `{}`).HasVM(apiv1.NewVMCID("vm-1"))
	var typed interface{ Type() string }
	if !errors.As(err, &typed) || typed.Type() != "Bosh::Clouds::CloudError" ||
		!strings.Contains(err.Error(), "vm-1") || !strings.Contains(err.Error(), "http://cs/client/api") {
		t.Fatalf("got %v", err)
	}
}

func TestMalformedContextIsRefused(t *testing.T) {
	var ctx apiv1.CloudPropsImpl
	_ = json.Unmarshal([]byte(`{"vm":{"stemcell":{"api_version":"three"}}}`), &ctx)
	if _, err := cpi.NewFactory(config.Config{}, &fakeCloud{}, boshlog.NewLogger(boshlog.LevelNone)).New(ctx); err == nil {
		t.Fatal("a stemcell api_version that is not a number must not pass")
	}
}
