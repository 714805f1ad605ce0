package simulator

import "time"

// ServiceOffering is a compute offering. A customized offering leaves CPU and
// memory to deployVirtualMachine's details.
type ServiceOffering struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	DisplayText string    `json:"displaytext"`
	CPUNumber   int       `json:"cpunumber,omitempty"`
	CPUSpeed    int       `json:"cpuspeed,omitempty"`
	Memory      int       `json:"memory,omitempty"` // MiB
	Customized  bool      `json:"iscustomized"`
	Created     time.Time `json:"created"`
}

func (o *ServiceOffering) uuid() string { return o.ID }

// DiskOffering is a data disk offering; DiskSize is in GiB, 0 for customized
// offerings.
type DiskOffering struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	DisplayText string    `json:"displaytext"`
	DiskSize    int64     `json:"disksize"`
	Customized  bool      `json:"iscustomized"`
	Created     time.Time `json:"created"`
}

func (o *DiskOffering) uuid() string { return o.ID }

// seedOfferings creates the simulator's stock compute offerings plus a
// customized one, and disk offerings small to large plus a customized one.
func seedOfferings(st *state, now time.Time) {
	for _, o := range []ServiceOffering{
		{Name: "Small Instance", DisplayText: "Small Instance", CPUNumber: 1, CPUSpeed: 500, Memory: 512},
		{Name: "Medium Instance", DisplayText: "Medium Instance", CPUNumber: 1, CPUSpeed: 1000, Memory: 1024},
		{Name: "Custom", DisplayText: "Custom", Customized: true},
	} {
		o.ID, o.InternalID = st.newID(kindServiceOffering)
		o.Created = now
		st.ServiceOfferings = append(st.ServiceOfferings, &o)
	}
	for _, o := range []DiskOffering{
		{Name: "Small", DisplayText: "Small Disk, 5 GB", DiskSize: 5},
		{Name: "Medium", DisplayText: "Medium Disk, 20 GB", DiskSize: 20},
		{Name: "Large", DisplayText: "Large Disk, 100 GB", DiskSize: 100},
		{Name: "Custom", DisplayText: "Custom Disk", Customized: true},
	} {
		o.ID, o.InternalID = st.newID(kindDiskOffering)
		o.Created = now
		st.DiskOfferings = append(st.DiskOfferings, &o)
	}
}

func init() {
	register(
		command{name: "listServiceOfferings", idKind: kindServiceOffering, sync: listServiceOfferings},
		command{name: "listDiskOfferings", idKind: kindDiskOffering, sync: listDiskOfferings},
	)
}

// listServiceOfferings lists user offerings; the simulator has no system VM
// offerings, so issystem=true finds nothing.
func listServiceOfferings(c *Call) (any, error) {
	l := lister[*ServiceOffering]{key: "serviceoffering", id: (*ServiceOffering).uuid,
		name:    func(o *ServiceOffering) string { return o.Name },
		keyword: func(o *ServiceOffering) []string { return []string{o.Name, o.DisplayText} },
		view:    serviceOfferingView}
	p := c.Params
	return l.run(c, c.st.ServiceOfferings, func(o *ServiceOffering) bool {
		return !p.Bool("issystem", false) && p.Get("systemvmtype") == "" && activeState(p) &&
			optEq(p.Get("storagetype"), "shared") && fits(o, p)
	})
}

// fits applies the 4.15 filters: the offering must offer at least the asked
// CPU count, speed and memory (customized offerings fit anything).
func fits(o *ServiceOffering, p Params) bool {
	if o.Customized {
		return true
	}
	return int64(o.CPUNumber) >= p.Int("cpunumber", 0) && int64(o.CPUSpeed) >= p.Int("cpuspeed", 0) &&
		int64(o.Memory) >= p.Int("memory", 0)
}

// activeState is the 4.19 state filter: Active by default, "all" for both.
func activeState(p Params) bool {
	s := p.Get("state")
	return s == "" || optEq(s, "Active") || optEq(s, "all")
}

func serviceOfferingView(o *ServiceOffering) map[string]any {
	v := map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "created": csTime(o.Created),
		"iscustomized": o.Customized, "storagetype": "shared", "provisioningtype": "thin", "offerha": false,
		"limitcpuuse": false, "isvolatile": false, "issystem": false, "defaultuse": false,
		"iscustomizediops": false, "cacheMode": "none", "dynamicscalingenabled": true,
		"diskofferingstrictness": false, "encryptroot": false, "hasannotations": false, "state": "Active",
		"purgeresources": false, "gpudisplay": false, "rootdisksize": 0}
	if !o.Customized {
		v["cpunumber"], v["cpuspeed"], v["memory"] = o.CPUNumber, o.CPUSpeed, o.Memory
	}
	return v
}

func listDiskOfferings(c *Call) (any, error) {
	l := lister[*DiskOffering]{key: "diskoffering", id: (*DiskOffering).uuid,
		name:    func(o *DiskOffering) string { return o.Name },
		keyword: func(o *DiskOffering) []string { return []string{o.Name, o.DisplayText} },
		view:    diskOfferingView}
	p := c.Params
	return l.run(c, c.st.DiskOfferings, func(o *DiskOffering) bool {
		return activeState(p) && optEq(p.Get("storagetype"), "shared") && !p.Bool("encrypt", false)
	})
}

func diskOfferingView(o *DiskOffering) map[string]any {
	return map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "disksize": o.DiskSize,
		"iscustomized": o.Customized, "created": csTime(o.Created), "storagetype": "shared",
		"provisioningtype": "thin", "cacheMode": "none", "displayoffering": true, "encrypt": false,
		"iscustomizediops": false, "disksizestrictness": false, "hasannotations": false, "state": "Active",
		"suitableforvirtualmachine": true}
}
