package doctor

import (
	"encoding/json"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// CloudConfig is what doctor reads of a BOSH cloud-config (`bosh
// cloud-config` prints it): the AZs' zones, the networks' CloudStack
// networks, the VM and disk types' offerings. The cloud_properties of VM
// types, disk types and networks are read through the CPI's own schemas
// (vmtype.Props, cloudprops.Disk, cloudprops.Network). Keys they do not
// know are ignored: the cloud-config of a director with several CPIs holds
// other clouds' types and networks, and the CPI itself refuses an unknown
// key of its own in create_vm and create_disk.
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
	Name            string
	Type            string
	Subnets         []ccSubnet
	CloudProperties cloudprops.Network // a dynamic network without subnets
}

type ccSubnet struct {
	AZ              string
	AZs             []string
	CloudProperties cloudprops.Network
}

// UnmarshalYAML reads the network's and each subnet's cloud_properties as
// create_vm does, naming the network as create_vm's errors do.
func (n *ccNetwork) UnmarshalYAML(node *yaml.Node) error {
	var raw struct {
		Name    string `yaml:"name"`
		Type    string `yaml:"type"`
		Subnets []struct {
			AZ              string         `yaml:"az"`
			AZs             []string       `yaml:"azs"`
			CloudProperties map[string]any `yaml:"cloud_properties"`
		} `yaml:"subnets"`
		CloudProperties map[string]any `yaml:"cloud_properties"`
	}
	if err := node.Decode(&raw); err != nil {
		return err
	}
	*n = ccNetwork{Name: raw.Name, Type: raw.Type}
	owner := fmt.Sprintf("network %q", raw.Name)
	var err error
	if n.CloudProperties, err = readProps[cloudprops.Network](raw.CloudProperties, owner); err != nil {
		return err
	}
	for _, s := range raw.Subnets {
		sub := ccSubnet{AZ: s.AZ, AZs: s.AZs}
		if sub.CloudProperties, err = readProps[cloudprops.Network](s.CloudProperties, owner); err != nil {
			return err
		}
		n.Subnets = append(n.Subnets, sub)
	}
	return nil
}

type ccVMType struct {
	Name            string
	CloudProperties vmtype.Props
}

// UnmarshalYAML reads the cloud_properties through create_vm's schema.
func (t *ccVMType) UnmarshalYAML(n *yaml.Node) (err error) {
	t.Name, t.CloudProperties, err = readType[vmtype.Props](n, "vm_type")
	return err
}

type ccDiskType struct {
	Name            string
	CloudProperties cloudprops.Disk
}

// UnmarshalYAML reads the cloud_properties through create_disk's schema.
func (t *ccDiskType) UnmarshalYAML(n *yaml.Node) (err error) {
	t.Name, t.CloudProperties, err = readType[cloudprops.Disk](n, "disk_type")
	return err
}

// readType reads a VM or disk type (kind): its name and its cloud_properties.
func readType[T any](n *yaml.Node, kind string) (string, T, error) {
	var raw struct {
		Name            string         `yaml:"name"`
		CloudProperties map[string]any `yaml:"cloud_properties"`
	}
	if err := n.Decode(&raw); err != nil {
		var zero T
		return "", zero, err
	}
	props, err := readProps[T](raw.CloudProperties, fmt.Sprintf("%s %q", kind, raw.Name))
	return raw.Name, props, err
}

// readProps reads cloud_properties into the CPI's schema T as the director
// passes them to the CPI, in JSON: a value of the wrong type is named by its
// path under owner (`vm_type "x" cloud_properties.cpu`).
func readProps[T any](cp map[string]any, owner string) (T, error) {
	var props T
	doc, err := json.Marshal(cp)
	if err == nil {
		err = json.Unmarshal(doc, &props)
	}
	return props, jsonwords.In(owner+" cloud_properties", err)
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
	add := func(n ccNetwork, props cloudprops.Network, azs []string) {
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
