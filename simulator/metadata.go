package simulator

import (
	"encoding/base64"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/vm"
)

// The virtual router's metadata service, as a guest sees it at
// http://<router>/latest/...: the simulator serves every VM's view under
// /metadata/<vm-uuid>/latest/..., so an agent's HTTP metadata source can be
// pointed at http://HOST:PORT/metadata/<vm-uuid>.
//
//	/metadata/<vm>/latest/user-data           the user data, base64-decoded (404 when none)
//	/metadata/<vm>/latest/meta-data/          the names below that have a value, one per line
//	/metadata/<vm>/latest/meta-data/<name>    one value (404 when it has none)
//
// The values are those of NetworkModelImpl.generateVmData, in its order:
// service-offering (display text), availability-zone (zone name),
// local-hostname (host name), local-ipv4 (default NIC), public-ipv4 (the
// address IPAddressDao.findByAssociatedVmId finds, i.e. the static NAT
// one, else the guest address), public-hostname (in an advanced zone the
// static NAT address only), instance-id and vm-id (both the VM's UUID when
// it has one), public-keys (the key pairs' public keys, one per line) and
// cloud-identifier ("CloudStack-{" + cloud.identifier + "}"). Not served
// (departures, none of them read by the CPI or bosh-agent):
// hypervisor-host-name (the host name the caller of generateVmData passes),
// cloud-domain/cloud-domain-id (only with
// VirtualMachineManager.AllowExposeDomainInMetadata), cloud-name (only with
// MetadataCustomCloudName), the password files and the user-data details;
// the meta-data/ index, one name per line, is the simulator's rendering of
// the files the router writes.
//
// /metadata/<vm>/sim/disks is the simulator's own: the VM's disks as its
// guest names them (guestdisks.go), which no real router serves.
//
// /metadata/<vm>/sim/iso is the simulator's own too: the bytes of the ISO
// attached to the VM (attachIso), once its copy in the VM's zone is ready,
// whatever the VM's networks offer (404 otherwise). It stands in for the
// CD-ROM a KVM guest would read (device 3, hdc: TemplateManagerImpl.
// prepareIsoForVmProfile), so tests and the e2e launcher can hand an agent
// the settings on the CPI's config-drive ISO.

func (s *Server) metadataHandler() http.Handler {
	return http.HandlerFunc(s.serveMetadata)
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	vmID, path, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/metadata/"), "/")
	if strings.TrimSuffix(path, "/") == "sim/iso" {
		s.serveAttachedISO(w, r, vmID)
		return
	}
	s.Mu.Lock()
	body, ok := s.metadata(vmID, path)
	s.Mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(body))
}

// serveAttachedISO answers /metadata/<vm>/sim/iso (simulator plumbing: no
// CloudStack service serves this).
func (s *Server) serveAttachedISO(w http.ResponseWriter, r *http.Request, vmID string) {
	s.Mu.Lock()
	file := ""
	if inst, ok := model.ByID(s.State.VMs, vmID); ok && inst.Removed == nil && inst.ISOID != "" {
		if iso, ok := model.ByID(s.State.Templates, inst.ISOID); ok && iso.Removed == nil {
			if cp := iso.CopyIn(inst.ZoneID); cp != nil && cp.Ready() {
				file = s.Xfer.ExistingImage(iso.ID, cp.ZoneID)
			}
		}
	}
	s.Mu.Unlock()
	f, err := os.Open(file)
	if file == "" || err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, f)
}

// metadata answers one metadata path of a VM; the caller holds the lock.
func (s *Server) metadata(vmID, path string) (string, bool) {
	inst, found := model.ByID(s.State.VMs, vmID)
	if !found || inst.Removed != nil || !vm.UserDataApplied(s.State, inst) {
		// Only a network whose offering provides the UserData service has
		// a virtual router serving the VM's data (UserVmManagerImpl.
		// applyUserData).
		return "", false
	}
	switch path = strings.TrimSuffix(path, "/"); path {
	case "sim/disks":
		return storage.GuestDisksJSON(s.State, inst), true // not the router's: guestdisks.go
	case "latest":
		return "user-data\nmeta-data\n", true
	case "latest/user-data":
		if inst.UserData == "" {
			return "", false
		}
		b, err := base64.StdEncoding.DecodeString(inst.UserData)
		return string(b), err == nil
	case "latest/meta-data":
		var names []string
		for _, kv := range vmMetadata(s.State, inst) {
			names = append(names, kv[0])
		}
		return strings.Join(names, "\n") + "\n", true
	}
	name, ok := strings.CutPrefix(path, "latest/meta-data/")
	if !ok {
		return "", false
	}
	for _, kv := range vmMetadata(s.State, inst) {
		if kv[0] == name {
			return kv[1], true
		}
	}
	return "", false
}

// vmMetadata are the VM's meta-data names and values in the order the
// router writes them; names without a value are left out.
func vmMetadata(st *model.State, vm *model.VirtualMachine) [][2]string {
	var out [][2]string
	add := func(name, value string) {
		if value != "" {
			out = append(out, [2]string{name, value})
		}
	}
	if o, ok := model.ByID(st.ServiceOfferings, vm.ServiceOfferingID); ok {
		add("service-offering", o.DisplayText)
	}
	if z := st.Zone(vm.ZoneID); z != nil {
		add("availability-zone", z.Name)
	}
	add("local-hostname", vm.Name)
	guestIP := ""
	for _, n := range vm.NICs {
		if n.IsDefault {
			guestIP = n.IPAddress
		}
	}
	add("local-ipv4", guestIP)
	publicIP, publicHost := guestIP, ""
	if ip := model.StaticNATOf(st, vm.ID); ip != nil {
		publicIP, publicHost = ip.Address, ip.Address
	}
	add("public-ipv4", publicIP)
	add("public-hostname", publicHost)
	add("instance-id", vm.ID)
	add("vm-id", vm.ID)
	add("public-keys", vm.SSHPublicKeys)
	add("cloud-identifier", "CloudStack-{"+st.ManagementServerID+"}")
	return out
}
