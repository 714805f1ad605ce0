package doctor

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// settingInternalSites is the global setting naming the private sites the
// secondary storage VM may download from.
const settingInternalSites = "secstorage.allowed.internal.sites"

// checkWebDAV checks that CloudStack's secondary storage VM may download
// what the CPI publishes by WebDAV: registerTemplate and registerIso take
// a private (site-local) host, and the SSVM then reaches it only when
// secstorage.allowed.internal.sites covers it; loopback and link-local
// hosts are refused at once (UriUtils.validateUrl).
func (r *run) checkWebDAV() {
	s := r.cfg.Stemcell
	if s.Publish != config.PublishWebDAV && s.ConfigDrivePublish != config.PublishWebDAV {
		r.pass(CheckWebDAV, "not used: stemcells and config drives are uploaded")
		return
	}
	host := webdavHost(r.cfg.WebDAV)
	if host == "" {
		r.fail(CheckWebDAV, "neither webdav.public_url nor webdav.listen names a host", "set webdav.public_url "+
			"to a URL the secondary storage VM reaches")
		return
	}
	ips, err := r.addresses(host)
	if err != nil {
		r.fail(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s does not resolve here: %v", host, err),
			"give webdav.public_url a host the secondary storage VM can resolve and reach")
		return
	}
	var private []net.IP
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
			r.fail(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s is %s, which CloudStack refuses in "+
				"registerTemplate", host, ip), "give webdav.public_url an address the secondary storage VM reaches")
			return
		}
		if ip.IsPrivate() {
			private = append(private, ip)
		}
	}
	if len(private) == 0 {
		r.pass(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s is public: the secondary storage VM "+
			"downloads through its public interface", host))
		return
	}
	r.internalSites(host, private)
}

// internalSites checks secstorage.allowed.internal.sites covers the
// private addresses, where the account may read it.
func (r *run) internalSites(host string, private []net.IP) {
	value, err := r.cloud.Setting(settingInternalSites)
	if cloudstack.IsPermissionDenied(err) {
		r.unchecked(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s is private (%s), and only admins may "+
			"read %s", host, joinIPs(private), settingInternalSites),
			fmt.Sprintf("have an admin check that %s covers %s", settingInternalSites, joinIPs(private)))
		return
	}
	if err != nil {
		r.fail(CheckWebDAV, "reading "+settingInternalSites+": "+err.Error(), "check the setting by hand")
		return
	}
	sites := internalSites(value)
	var uncovered []net.IP
	for _, ip := range private {
		if !covers(sites, ip) {
			uncovered = append(uncovered, ip)
		}
	}
	if len(uncovered) > 0 {
		r.fail(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s is private (%s) and %s (%q) does not cover "+
			"it: the secondary storage VM cannot download stemcells", host, joinIPs(uncovered), settingInternalSites, value),
			fmt.Sprintf("add %s (or its network's CIDR) to the global setting %s, then restart the management "+
				"server and the secondary storage VM, which read it when they start", joinIPs(uncovered), settingInternalSites))
		return
	}
	r.pass(CheckWebDAV, fmt.Sprintf("webdav.public_url's host %s is private (%s), covered by %s (%q)", host,
		joinIPs(private), settingInternalSites, value))
}

// webdavHost is the host of the URLs the secondary storage VM is sent:
// webdav.public_url's, else webdav.listen's (webdav.Listen).
func webdavHost(w config.WebDAV) string {
	if w.PublicURL != "" {
		if u, err := url.Parse(w.PublicURL); err == nil {
			return u.Hostname()
		}
		return ""
	}
	host, _, err := net.SplitHostPort(w.Listen)
	if err != nil {
		return ""
	}
	return host
}

// addresses are host's IPv4 and IPv6 addresses: host itself when it is one.
func (r *run) addresses(host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	resolve := r.opts.Resolve
	if resolve == nil {
		resolve = net.LookupHost
	}
	names, err := resolve(host)
	if err != nil {
		return nil, err
	}
	var ips []net.IP
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		}
	}
	return ips, nil
}

// internalSites reads the setting as the secondary storage VM is handed it
// (SecondaryStorageManagerImpl.generateVMSetupCommand): comma-separated
// CIDRs or addresses; 0.0.0.0 sites are not valid (the setting's
// description), so they are left out.
func internalSites(value string) []*net.IPNet {
	var nets []*net.IPNet
	for _, site := range strings.Split(value, ",") {
		site = strings.TrimSpace(site)
		if site == "" {
			continue
		}
		if !strings.Contains(site, "/") {
			site += "/32"
		}
		if _, n, err := net.ParseCIDR(site); err == nil && !n.IP.Equal(net.IPv4zero) {
			nets = append(nets, n)
		}
	}
	return nets
}

func covers(sites []*net.IPNet, ip net.IP) bool {
	for _, n := range sites {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

func joinIPs(ips []net.IP) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return strings.Join(s, ", ")
}
