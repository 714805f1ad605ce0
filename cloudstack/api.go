package cloudstack

// API is the seam the CPI methods depend on: everything they ask of
// CloudStack, in the CPI's terms. *Client implements it against a real
// management server; unit tests use a fake.
type API interface {
	// FindVM looks a VM up by UUID, or by exact name for the name-style
	// CIDs of earlier CloudStack CPIs. Absent is (nil, nil).
	FindVM(ref string) (*VM, error)
}

var _ API = (*Client)(nil)
