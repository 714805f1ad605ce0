package cloudprops_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
)

// A disk type's cloud_properties give its offering; an unknown key is
// refused, named under whose properties they are.
func TestReadDisk(t *testing.T) {
	d, err := cloudprops.ReadDisk(map[string]any{"disk_offering": "Fast"}, "disk")
	if err != nil || d.DiskOffering != "Fast" {
		t.Fatalf("%+v, %v", d, err)
	}
	if d, err := cloudprops.ReadDisk(nil, "disk"); err != nil || d.DiskOffering != "" {
		t.Fatalf("none: %+v, %v", d, err)
	}
	_, err = cloudprops.ReadDisk(map[string]any{"disk_ofering": "Fast"}, `disk_type "fast"`)
	if err == nil || err.Error() != `disk_type "fast" cloud_properties: unknown field "disk_ofering"` {
		t.Fatalf("unknown key: %v", err)
	}
}

// A network's cloud_properties give its CloudStack network and whether it
// is undiscoverable, also as a string; an unknown key or a wrong type is
// refused, named under the network.
func TestReadNetwork(t *testing.T) {
	n, err := cloudprops.ReadNetwork(map[string]any{"name": "guest", "undiscoverable": "true"}, `network "m"`)
	if err != nil || n.Name != "guest" || !bool(n.Undiscoverable) {
		t.Fatalf("%+v, %v", n, err)
	}
	for want, cp := range map[string]map[string]any{
		`network "m" cloud_properties: unknown field "subnet"`: {"name": "guest", "subnet": "x"},
		`network "m" cloud_properties.name: expected a string`: {"name": 7},
	} {
		if _, err := cloudprops.ReadNetwork(cp, `network "m"`); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %s", cp, err, want)
		}
	}
}
