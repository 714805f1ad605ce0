package doctor

import (
	"encoding/json"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// CloudConfig is what doctor reads of a BOSH cloud-config (`bosh
// cloud-config` prints it): the AZs' zones, the networks' CloudStack
// networks, the VM and disk types' offerings. A VM type's cloud_properties
// are create_vm's own (vmtype.Props). Keys it does not know are ignored:
// the CPI itself refuses unknown cloud_properties keys.
type CloudConfig struct {
	AZs       []ccAZ       `yaml:"azs"`
	Networks  []ccNetwork  `yaml:"networks"`
	VMTypes   []ccVMType   `yaml:"vm_types"`
	DiskTypes []ccDiskType `yaml:"disk_types"`
}

type ccAZ struct {
	Name            string `yaml:"name"`
	CloudProperties struct {
		Zone string `yaml:"zone"`
	} `yaml:"cloud_properties"`
}

type ccNetwork struct {
	Name            string     `yaml:"name"`
	Type            string     `yaml:"type"`
	Subnets         []ccSubnet `yaml:"subnets"`
	CloudProperties ccNetProps `yaml:"cloud_properties"` // a dynamic network without subnets
}

type ccSubnet struct {
	AZ              string     `yaml:"az"`
	AZs             []string   `yaml:"azs"`
	CloudProperties ccNetProps `yaml:"cloud_properties"`
}

type ccNetProps struct {
	Name string `yaml:"name"`
}

type ccVMType struct {
	Name            string
	CloudProperties vmtype.Props
}

// UnmarshalYAML reads the cloud_properties through create_vm's schema,
// which speaks JSON, as the director passes them to the CPI.
func (t *ccVMType) UnmarshalYAML(n *yaml.Node) error {
	var raw struct {
		Name            string         `yaml:"name"`
		CloudProperties map[string]any `yaml:"cloud_properties"`
	}
	if err := n.Decode(&raw); err != nil {
		return err
	}
	t.Name = raw.Name
	what := fmt.Sprintf("vm_type %q cloud_properties", raw.Name)
	doc, err := json.Marshal(raw.CloudProperties)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return jsonwords.In(what, json.Unmarshal(doc, &t.CloudProperties))
}

type ccDiskType struct {
	Name            string `yaml:"name"`
	CloudProperties struct {
		DiskOffering string `yaml:"disk_offering"`
	} `yaml:"cloud_properties"`
}

// LoadCloudConfig reads a cloud-config YAML file.
func LoadCloudConfig(path string) (*CloudConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cloud-config: %w", err)
	}
	var cc CloudConfig
	if err := yaml.Unmarshal(raw, &cc); err != nil {
		return nil, fmt.Errorf("cloud-config %s: %w", path, err)
	}
	return &cc, nil
}

// azZone is the CloudStack zone an AZ names (its cloud_properties.zone),
// "" for the default zone.
func (cc *CloudConfig) azZone(az string) string {
	for _, a := range cc.AZs {
		if a.Name == az {
			return a.CloudProperties.Zone
		}
	}
	return ""
}

// netRef is a CloudStack network a BOSH network's subnet names, in a zone
// ("" for the default zone).
type netRef struct {
	bosh, name, zone string
}

// networkRefs lists the CloudStack networks the cloud-config names, once
// per zone their subnets' AZs put them in.
func (cc *CloudConfig) networkRefs() []netRef {
	var refs []netRef
	seen := map[netRef]bool{}
	add := func(n ccNetwork, props ccNetProps, azs []string) {
		if props.Name == "" {
			return
		}
		if len(azs) == 0 {
			azs = []string{""}
		}
		for _, az := range azs {
			ref := netRef{bosh: n.Name, name: props.Name, zone: cc.azZone(az)}
			if !seen[ref] {
				seen[ref] = true
				refs = append(refs, ref)
			}
		}
	}
	for _, n := range cc.Networks {
		add(n, n.CloudProperties, nil)
		for _, s := range n.Subnets {
			azs := s.AZs
			if s.AZ != "" {
				azs = append([]string{s.AZ}, azs...)
			}
			add(n, s.CloudProperties, azs)
		}
	}
	return refs
}
