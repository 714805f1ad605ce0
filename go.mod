module github.com/bosh-cloudstack/cloudstack-cpi

go 1.26.0

require (
	github.com/apache/cloudstack-go/v2 v2.19.0
	github.com/cloudfoundry/bosh-cpi-go v0.0.0-20250111100038-3f19018803f1
	github.com/cloudfoundry/bosh-utils v0.0.643
	github.com/diskfs/go-diskfs v1.6.0
	golang.org/x/net v0.62.0
)

require (
	go.uber.org/mock v0.5.0
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/sys v0.49.0
)

require github.com/djherbis/times v1.6.0 // indirect
