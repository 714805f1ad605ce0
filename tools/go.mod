module github.com/bosh-cloudstack/cloudstack-cpi/tools

go 1.26.0

require (
	github.com/cloudfoundry/bosh-agent/v2 v2.769.0
	github.com/cloudfoundry/bosh-utils v0.0.555
)

require (
	code.cloudfoundry.org/clock v1.44.0 // indirect
	code.cloudfoundry.org/tlsconfig v0.34.0 // indirect
	github.com/bmatcuk/doublestar v1.3.4 // indirect
	github.com/charlievieth/fs v0.0.3 // indirect
	github.com/cloudfoundry/go-socks5 v0.0.0-20250423223041-4ad5fea42851 // indirect
	github.com/cloudfoundry/gosigar v1.3.102 // indirect
	github.com/cloudfoundry/socks5-proxy v0.2.156 // indirect
	github.com/containerd/cgroups v1.1.0 // indirect
	github.com/coreos/go-iptables v0.8.0 // indirect
	github.com/coreos/go-systemd/v22 v22.6.0 // indirect
	github.com/docker/go-units v0.5.0 // indirect
	github.com/godbus/dbus/v5 v5.1.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/jpillora/backoff v1.0.0 // indirect
	github.com/mitchellh/mapstructure v1.5.0 // indirect
	github.com/nu7hatch/gouuid v0.0.0-20131221200532-179d4d0c4d8d // indirect
	github.com/nxadm/tail v1.4.11 // indirect
	github.com/opencontainers/runtime-spec v1.2.1 // indirect
	github.com/pivotal-cf/paraphernalia v0.0.0-20180203224945-a64ae2051c20 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/crypto v0.41.0 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
	inet.af/wf v0.0.0-20221017222439-36129f591884 // indirect
)

replace inet.af/wf => ./stubs/wf
