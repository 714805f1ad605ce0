// Command mkimage writes a small, structurally valid stemcell image for the
// demo and the e2e harness: the bzip2'd dynamic VHD a CloudStack stemcell
// ships, a QCOW2, an OpenStack-style tgz, an OVA or a vSphere stemcell's
// tgz of its OVF files.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

func main() {
	kind := flag.String("kind", "vhd.bz2", "vhd.bz2, vhd, qcow2, openstack-tgz, ova or vsphere-tgz")
	out := flag.String("o", "image", "output file")
	flag.Parse()
	data, err := build(*kind)
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func build(kind string) ([]byte, error) {
	switch kind {
	case "vhd.bz2":
		return testimages.Bzip2(testimages.VHD(64 << 20))
	case "vhd":
		return testimages.VHD(64 << 20), nil
	case "qcow2":
		return testimages.QCOW2(1 << 30), nil
	case "openstack-tgz":
		return testimages.OpenStackTgz(testimages.QCOW2(1 << 30)), nil
	case "ova":
		return testimages.OVA(), nil
	case "vsphere-tgz":
		return testimages.Gzip(testimages.Tar(testimages.OVFEntries()...)), nil
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}
