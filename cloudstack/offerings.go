package cloudstack

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// ServiceOffering is a compute offering. CloudStack's answer leaves out
// what an offering leaves to the deployment (a null cpunumber, cpuspeed or
// memory is not serialized); a deployment gives those in its details, within
// the limits a custom constrained offering keeps in serviceofferingdetails
// (UserVmManagerImpl.validateCustomParameters). What the offering sets
// cannot be sent.
type ServiceOffering struct {
	ID       string
	Name     string
	CPUs     int // the offering's own values, 0 where it leaves them open
	CPUSpeed int // MHz
	MemoryMB int
	// Customized is iscustomized: something is left to the deployment.
	Customized bool
	// CPUsFixed, SpeedFixed and MemoryFixed say the offering sets that value.
	CPUsFixed, SpeedFixed, MemoryFixed bool
	// Constrained is a custom constrained offering: it limits the CPUs and
	// memory a deployment may ask for.
	Constrained bool
	// The limits on what is open; CloudStack's defaults where the offering
	// names none (1 CPU, 32 MiB, no maximum: 0).
	MinCPUs, MaxCPUs, MinMemoryMB, MaxMemoryMB int
	// StorageTags are the tags of its root disk's storage: the service
	// offering's "tags" the earlier CPIs filtered on, which 4.22 answers as
	// storagetags (ServiceOfferingResponse.tags).
	StorageTags OfferingTags
}

// DiskOffering is a disk offering; Customized ones take a size.
type DiskOffering struct {
	ID         string
	Name       string
	SizeGB     int64
	Customized bool
	Tags       OfferingTags
}

// OfferingTags are an offering's tags as CloudStack keeps them: one
// comma-separated string (StringUtils.cleanupTags trims each tag), absent or
// empty when there are none. A struct, so offerings stay comparable.
type OfferingTags struct{ csv string }

// NewOfferingTags holds the tags CloudStack answered as csv.
func NewOfferingTags(csv string) OfferingTags { return OfferingTags{csv} }

// List is StringUtils.csvTagsToList: split on commas, each trimmed. The
// empty entries cleanupTags leaves between two commas are dropped: no
// configured tag is empty, so none could match them.
func (t OfferingTags) List() []string {
	var tags []string
	for _, tag := range strings.Split(t.csv, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			tags = append(tags, tag)
		}
	}
	return tags
}

// Has reports whether the offering carries tag, compared as CloudStack
// compares tags: without regard to case (StringUtils.areTagsEqual lowercases
// both sides).
func (t OfferingTags) Has(tag string) bool {
	for _, own := range t.List() {
		if strings.EqualFold(own, tag) {
			return true
		}
	}
	return false
}

// String is the tags for errors: "no tags" or the quoted list.
func (t OfferingTags) String() string {
	tags := t.List()
	if len(tags) == 0 {
		return "no tags"
	}
	return fmt.Sprintf("tags %q", tags)
}

// offeringJSON is listServiceOfferings' serviceoffering, read with
// pointers so an absent value is told apart from a zero.
type offeringJSON struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	CPUNumber    *int              `json:"cpunumber"`
	CPUSpeed     *int              `json:"cpuspeed"`
	Memory       *int              `json:"memory"`
	IsCustomized bool              `json:"iscustomized"`
	Details      map[string]string `json:"serviceofferingdetails"`
	StorageTags  string            `json:"storagetags"`
}

type offeringList struct {
	Offerings []offeringJSON `json:"serviceoffering"`
}

// Defaults validateCustomParameters applies where an offering names no limit.
const (
	defaultMinCPUs     = 1
	defaultMinMemoryMB = 32
)

func (o offeringJSON) typed() ServiceOffering {
	so := ServiceOffering{ID: o.ID, Name: o.Name, Customized: o.IsCustomized,
		CPUsFixed: o.CPUNumber != nil, SpeedFixed: o.CPUSpeed != nil, MemoryFixed: o.Memory != nil,
		StorageTags: NewOfferingTags(o.StorageTags)}
	for _, v := range []struct {
		from *int
		to   *int
	}{{o.CPUNumber, &so.CPUs}, {o.CPUSpeed, &so.CPUSpeed}, {o.Memory, &so.MemoryMB}} {
		if v.from != nil {
			*v.to = *v.from
		}
	}
	limit := func(key string, def int) int {
		v, ok := o.Details[key]
		if ok {
			so.Constrained = true
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n >= math.MaxInt32 {
			return def // NumbersUtil.parseInt's default, as CloudStack reads it
		}
		return n
	}
	so.MinCPUs, so.MaxCPUs = limit("mincpunumber", defaultMinCPUs), limit("maxcpunumber", 0)
	so.MinMemoryMB, so.MaxMemoryMB = limit("minmemory", defaultMinMemoryMB), limit("maxmemory", 0)
	return so
}

// listOfferings runs listServiceOfferings through CustomRequest:
// cloudstack-go's own ServiceOffering reads an absent cpuspeed as 0, which a
// fixed offering may also have.
func (c *Client) listOfferings(params map[string]string) ([]ServiceOffering, error) {
	p := &csgo.CustomServiceParams{}
	for k, v := range params {
		p.SetParam(k, v)
	}
	if err := c.customInProject(p); err != nil {
		return nil, err
	}
	var l offeringList
	custom, _ := c.cs.Custom.(*csgo.CustomService)
	if err := custom.CustomRequest("listServiceOfferings", p, &l); err != nil {
		return nil, c.fail("listServiceOfferings", err)
	}
	out := make([]ServiceOffering, 0, len(l.Offerings))
	for _, o := range l.Offerings {
		out = append(out, o.typed())
	}
	return out, nil
}

// ServiceOfferings lists every compute offering the account can use.
func (c *Client) ServiceOfferings() ([]ServiceOffering, error) {
	return c.listOfferings(nil)
}

// FindServiceOffering resolves a compute offering by id or exact name.
func (c *Client) FindServiceOffering(ref string) (*ServiceOffering, error) {
	key := "name"
	if IsID(ref) {
		key = "id"
	}
	offerings, err := c.listOfferings(map[string]string{key: ref})
	if err != nil && !IsNoSuchEntity(err) {
		return nil, err
	}
	o, err := exactlyOne(offerings, ref, func(o ServiceOffering) (string, string) { return o.ID, o.Name },
		"compute offerings")
	if o == nil && err == nil {
		err = fmt.Errorf("CloudStack has no compute offering %q", ref)
	}
	return o, err
}

// Takes reports whether a deployment asking for cpus, memMB and (when not
// 0) speed MHz fits the offering: each value open and within its limits, or
// the offering's own.
func (o ServiceOffering) Takes(cpus, memMB, speed int) bool {
	return o.CheckCustom(cpus, memMB, speed) == nil
}

// CheckCustom is Takes with an error naming the offering and its limits.
func (o ServiceOffering) CheckCustom(cpus, memMB, speed int) error {
	var bad []string
	if o.CPUsFixed && cpus != o.CPUs || !o.CPUsFixed && !within(cpus, o.MinCPUs, o.MaxCPUs) {
		bad = append(bad, fmt.Sprintf("%d CPUs", cpus))
	}
	if o.MemoryFixed && memMB != o.MemoryMB || !o.MemoryFixed && !within(memMB, o.MinMemoryMB, o.MaxMemoryMB) {
		bad = append(bad, fmt.Sprintf("%d MiB of memory", memMB))
	}
	if o.SpeedFixed && speed != 0 && speed != o.CPUSpeed {
		bad = append(bad, fmt.Sprintf("%d MHz", speed))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("compute offering %q takes %s; the VM asks for %s", o.Name, o.Limits(), strings.Join(bad, " and "))
}

func within(n, lo, hi int) bool { return n >= lo && (hi == 0 || n <= hi) }

// Limits describes what the offering takes, for errors.
func (o ServiceOffering) Limits() string {
	span := func(fixed bool, own, lo, hi int, unit string) string {
		switch {
		case fixed:
			return fmt.Sprintf("exactly %d %s", own, unit)
		case hi == 0:
			return fmt.Sprintf("%d or more %s", lo, unit)
		}
		return fmt.Sprintf("%d to %d %s", lo, hi, unit)
	}
	s := span(o.CPUsFixed, o.CPUs, o.MinCPUs, o.MaxCPUs, "CPUs") + " and " +
		span(o.MemoryFixed, o.MemoryMB, o.MinMemoryMB, o.MaxMemoryMB, "MiB of memory")
	if o.SpeedFixed {
		s += fmt.Sprintf(" at %d MHz", o.CPUSpeed)
	}
	return s
}

// DiskOfferings lists every disk offering the account can use.
func (c *Client) DiskOfferings() ([]DiskOffering, error) {
	p := c.cs.DiskOffering.NewListDiskOfferingsParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	resp, err := c.cs.DiskOffering.ListDiskOfferings(p)
	if err != nil {
		return nil, c.fail("listDiskOfferings", err)
	}
	out := make([]DiskOffering, 0, len(resp.DiskOfferings))
	for _, o := range resp.DiskOfferings {
		out = append(out, typedDiskOffering(o))
	}
	return out, nil
}

func typedDiskOffering(o *csgo.DiskOffering) DiskOffering {
	return DiskOffering{ID: o.Id, Name: o.Name, SizeGB: o.Disksize, Customized: o.Iscustomized, Tags: NewOfferingTags(o.Tags)}
}

// CustomDiskOffering returns the customized disk offering (one that takes
// a size) a disk goes on when none is named: PickCustomDiskOffering among
// all.
func (c *Client) CustomDiskOffering() (*DiskOffering, error) {
	all, err := c.DiskOfferings()
	if err != nil {
		return nil, err
	}
	return PickCustomDiskOffering(all)
}

// CustomDiskOfferingName is the customized disk offering CloudStack makes
// when it first starts (ConfigurationServerImpl.persistDefaultValues:
// createDefaultDiskOffering("Custom", "Custom Disk", …, customized true)).
const CustomDiskOfferingName = "Custom"

// PickCustomDiskOffering chooses among offerings the customized one: the
// one named "Custom", else the only customized one. Among several others
// none is a safe guess, so the error names them.
func PickCustomDiskOffering(offerings []DiskOffering) (*DiskOffering, error) {
	var custom []DiskOffering
	for _, d := range offerings {
		if !d.Customized {
			continue
		}
		if d.Name == CustomDiskOfferingName {
			return &d, nil
		}
		custom = append(custom, d)
	}
	switch len(custom) {
	case 0:
		return nil, fmt.Errorf("CloudStack offers no customized disk offering")
	case 1:
		return &custom[0], nil
	}
	names := make([]string, len(custom))
	for i, o := range custom {
		names[i] = fmt.Sprintf("%q", o.Name)
	}
	return nil, fmt.Errorf("CloudStack offers several customized disk offerings (%s) and none named \"Custom\"",
		strings.Join(names, ", "))
}

// Is reports whether ref (an id or an exact name) names the offering.
func (o DiskOffering) Is(ref string) bool { return o.ID == ref || o.Name == ref }

// FindDiskOffering resolves a disk offering by id or exact name.
func (c *Client) FindDiskOffering(ref string) (*DiskOffering, error) {
	p := c.cs.DiskOffering.NewListDiskOfferingsParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	if IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetName(ref)
	}
	resp, err := c.cs.DiskOffering.ListDiskOfferings(p)
	if err = c.fail("listDiskOfferings", err); err != nil && !IsNoSuchEntity(err) {
		return nil, err
	}
	var listed []*csgo.DiskOffering
	if resp != nil {
		listed = resp.DiskOfferings
	}
	o, err := exactlyOne(listed, ref, func(o *csgo.DiskOffering) (string, string) { return o.Id, o.Name }, "disk offerings")
	if o == nil && err == nil {
		return nil, fmt.Errorf("CloudStack has no disk offering %q", ref)
	}
	if err != nil {
		return nil, err
	}
	d := typedDiskOffering(*o)
	return &d, nil
}
