// Package orphans is `cloudstack-cpi orphans`: it finds what the CPI made
// that no director call can reach any more, and removes it on request.
//
// By default only resources carrying the CPI's incomplete mark are listed
// (a create_vm, create_disk, snapshot_disk or create_stemcell that was
// killed or could not finish), with what hangs on such a VM (its public
// IP, its load-balancer rules, its config drive ISO). The director's own
// resources (complete VMs, detached persistent disks, complete snapshots,
// stemcells) are compared with the CIDs the director knows only when
// -known files name CIDs of that kind, and are never touched otherwise. cpi.json names no director, so
// every director's marks are listed, each row with the director uuid its
// mark carries; Options.Director keeps one.
package orphans

import (
	"sort"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Cloud is what orphans asks of CloudStack: the listings, and the same
// calls the CPI's own removals make.
type Cloud interface {
	cloudstack.Inventory
	cloudstack.OwnedTemplates
	cloudstack.OwnedISOs
	cloudstack.LoadBalancers
	cloudstack.VMs
	cloudstack.Addresses
	cloudstack.VolumeLeftovers
	cloudstack.SnapshotLeftovers
}

// Options are the command's flags.
type Options struct {
	// OlderThan spares what is younger: a running call may still be
	// making it.
	OlderThan time.Duration
	// Director keeps only the rows of this director uuid ("": all).
	Director string
	// Known holds the CIDs the director knows, from -known files.
	Known *Known
	// Now is the time ages are measured at.
	Now time.Time
}

// Kinds, in the order -delete removes them: a rule and an address before
// the VM behind them, a VM before its ISO and its disks.
const (
	KindLBRule   = "lb-rule"
	KindPublicIP = "public-ip"
	KindVM       = "vm"
	KindISO      = "iso"
	KindVolume   = "volume"
	KindSnapshot = "snapshot"
	KindTemplate = "template"
)

var kindOrder = map[string]int{KindLBRule: 0, KindPublicIP: 1, KindVM: 2, KindISO: 3, KindVolume: 4, KindSnapshot: 5,
	KindTemplate: 6}

// Row is one resource found.
type Row struct {
	// Director is the director uuid the resource's mark carries; "" when
	// the mark names none (a public IP the CPI acquired is tagged as the
	// CPI's, not with a director).
	Director string `json:"director"`
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	// Created is when CloudStack made it; zero when CloudStack does not
	// say (load-balancer rules). WriteJSON prints it, or null.
	Created   time.Time `json:"-"`
	SizeBytes int64     `json:"size_bytes"`
	// Why says why no director call reaches it.
	Why string `json:"why"`
	// Deleted and Error are set by Delete.
	Deleted bool   `json:"deleted,omitempty"`
	Error   string `json:"error,omitempty"`

	// incomplete: the row was listed for its incomplete mark (else it is
	// the director's, listed against -known).
	incomplete bool
	zoneID     string
}

// Age is how old the row was at now; 0 when CloudStack gave no time.
func (r Row) Age(now time.Time) time.Duration {
	if r.Created.IsZero() {
		return 0
	}
	return now.Sub(r.Created)
}

// Find lists the orphans, sorted by director, then in deletion order.
func Find(cloud Cloud, o Options) ([]Row, error) {
	if o.Known == nil {
		o.Known = &Known{}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	s := &survey{cloud: cloud, o: o}
	if err := s.run(); err != nil {
		return nil, err
	}
	rows := s.rows[:0]
	for _, r := range s.rows {
		if o.Director == "" || r.Director == o.Director {
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Director != b.Director {
			// Rows whose mark names no director come last.
			return b.Director == "" || a.Director != "" && a.Director < b.Director
		}
		if kindOrder[a.Kind] != kindOrder[b.Kind] {
			return kindOrder[a.Kind] < kindOrder[b.Kind]
		}
		return a.Name < b.Name
	})
	return rows, nil
}

// old says a resource made at created is old enough to be listed: a
// resource CloudStack gives no time for counts as old (its kinds are
// listed only when nothing running can be making them).
func (o Options) old(created time.Time) bool {
	return created.IsZero() || o.Now.Sub(created) >= o.OlderThan
}
