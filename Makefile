# The CloudStack CPI: build, demo and test against the built-in simulator.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
export CGO_ENABLED ?= 0

.PHONY: all build tools release demo test test-unit test-ccm lint test-deps generate bench bench-stemcell bench-upload-monitor bench-vm bench-scale bench-configdrive bench-registry bench-vhd agentsettings clean demo-deps e2e-deps test-crash test-crash-long

all: build

build: ## bin/cloudstack-cpi and bin/cloudstack-simulator
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/cloudstack-cpi .
	$(GO) build -o $(BIN)/cloudstack-simulator ./simulator/cmd/cloudstack-simulator

BOSH_CLI_VERSION := 7.9.13

tools: ## bin/bosh (bosh-cli v$(BOSH_CLI_VERSION)) and bin/bosh-agent (v2.769.0), from the tools module
	cd tools && $(GO) build -ldflags "-X 'github.com/cloudfoundry/bosh-cli/v7/cmd.VersionLabel=$(BOSH_CLI_VERSION)'" \
	  -o ../$(BIN)/bosh github.com/cloudfoundry/bosh-cli/v7
	cd tools && $(GO) build -o ../$(BIN)/bosh-agent github.com/cloudfoundry/bosh-agent/v2/main

# make release VERSION=x.y.z names the release's version (CHANGELOG.md);
# without VERSION on the command line or in the environment, bosh
# create-release numbers a dev release. BOSH=path uses that bosh CLI instead
# of building bin/bosh.
release: $(if $(BOSH),,tools) ## the BOSH release bosh-cloudstack-cpi: bin/cloudstack-cpi-release.tgz (bosh create-release; VERSION=x.y.z names it)
	RELEASE_VERSION='$(if $(filter command line environment,$(origin VERSION)),$(VERSION))' ./hack/release/make-release.sh

demo: build demo-deps ## start the simulator, pipe real CPI requests through the binary, print each call and result
	./hack/demo.sh

test: lint test-deps ## every test: unit, simulator, the real cloudstack CLI, the real agent's settings code, the Kubernetes provider's, the lifecycle suite
	@cc=$$($(GO) env CC); command -v "$${cc%% *}" >/dev/null || \
	  { echo "make test runs go test -race, which needs a C compiler ($$cc): apt-get install gcc" >&2; exit 1; }
	cd tools && $(GO) vet ./... && ../hack/no-leftovers.sh $(GO) test -count=1 ./...
	$(MAKE) --no-print-directory test-ccm
	# -timeout: the spec suite alone takes about 10 minutes on a 2-core machine, go test's default bound per package.
	# not-run.sh: last, it says which tests did not run for want of bosh-deployment's manifests.
	CGO_ENABLED=1 ./hack/not-run.sh ./hack/no-leftovers.sh $(GO) test -race -count=1 -timeout 30m ./...

# The CloudStack Kubernetes provider's module is in no checksum database
# record: its hashes are in tools/ccm/go.sum, and GONOSUMDB exempts that one
# path when go must look one up (never GOPRIVATE or GONOPROXY, which would
# fetch it from its origin instead of the module proxy).
CCM_ENV := GONOSUMDB=github.com/apache/cloudstack-kubernetes-provider

test-ccm: ## the CloudStack Kubernetes provider v1.2.0's own tests and its load-balancer lifecycle against the simulator (tools/ccm; part of make test)
	cd tools/ccm && $(CCM_ENV) $(GO) vet ./... && $(CCM_ENV) ../../hack/no-leftovers.sh $(GO) test -count=1 ./...

# bosh-deployment, read by tests of manifests/ and spec/ where internal/fixtures finds it; no test fetches it.
.PHONY: fixtures
BOSH_DEPLOYMENT_URL    ?= https://github.com/cloudfoundry/bosh-deployment.git
BOSH_DEPLOYMENT_COMMIT ?= c3b2109fe48267c599704eaa9aa62a0735a95707

fixtures: ## opt-in: git clone BOSH_DEPLOYMENT_URL at BOSH_DEPLOYMENT_COMMIT into ~/.cache/cloudstack-cpi, where the tests look for bosh-deployment
	$(GO) run ./internal/fixtures/boshdeployment fetch -url '$(BOSH_DEPLOYMENT_URL)' -commit '$(BOSH_DEPLOYMENT_COMMIT)'

test-unit: test-deps ## the fast tests only (no spec/ lifecycle suite)
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /spec)

lint: $(BIN)/golangci-lint ## gofmt, go vet and golangci-lint (.golangci.yml) over the CPI module and the tools modules
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/golangci-lint run ./...
	cd tools && ../$(BIN)/golangci-lint run ./...
	cd tools/ccm && $(CCM_ENV) ../../$(BIN)/golangci-lint run ./...

# golangci-lint, pinned in its own module (tools/lint) so that its
# dependencies never move the CPI's or bosh-cli's; rebuilt when the pin moves.
$(BIN)/golangci-lint: tools/lint/go.mod tools/lint/go.sum
	cd tools/lint && $(GO) build -o ../../$(BIN)/golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

test-deps: ## Debian packages the tests drive: the cloudstack CLI (cs), ruby, bzip2, xz-utils, curl, jq, qemu-utils (qemu-img)
	./hack/ensure-test-deps.sh test

demo-deps: ## Debian packages the demo drives: jq, curl, bzip2
	./hack/ensure-test-deps.sh demo

e2e-deps: ## Debian packages e2e-up drives: the cloudstack CLI (cs), ruby, jq, curl, bzip2, iproute2
	./hack/ensure-test-deps.sh e2e

bench: bench-stemcell bench-upload-monitor bench-vm bench-scale bench-configdrive bench-registry bench-vhd ## every benchmark, as tables beside their references

bench-vm: test-deps ## docs/development/performance.md's VM table: create_vm and delete_vm call counts with instant jobs, wall time against 2 s jobs; the director-shaped lifecycle's calls per method at 2 s jobs
	$(GO) test ./spec -run '^$$' -bench 'CreateVMJobLatency|DirectorLifecycleCalls' -benchtime 1x -timeout 15m

BENCH_SCALE_N ?= 50,200
BENCH_SCALE_BOUND ?= 10m
BENCH_SCALE_LIFECYCLE ?= both
BENCH_SCALE_THROTTLE ?= both
BENCH_SCALE_LOGS ?=

bench-scale: test-deps ## docs/development/performance.md's scale table: BENCH_SCALE_N lifecycles at once (default 50,200), one CPI process per call, a Domain Admin's keys, per-command job latencies, without and behind a 25/s API throttle; BENCH_SCALE_LIFECYCLE=vm|disk|both and BENCH_SCALE_THROTTLE=off|on|both run a part, BENCH_SCALE_LOGS=dir keeps failed lifecycles' CPI stderr
	BENCH_SCALE_N=$(BENCH_SCALE_N) BENCH_SCALE_BOUND=$(BENCH_SCALE_BOUND) BENCH_SCALE_LIFECYCLE=$(BENCH_SCALE_LIFECYCLE) \
	BENCH_SCALE_THROTTLE=$(BENCH_SCALE_THROTTLE) BENCH_SCALE_LOGS=$(BENCH_SCALE_LOGS) $(GO) test ./spec -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -timeout 150m

bench-configdrive: test-deps ## create_vm of bosh.io's OpenStack KVM stemcell, config drive by upload and by WebDAV, beside the XenServer stemcell's (2 s jobs, upload.monitoring.interval 60 s)
	$(GO) test ./spec -run '^$$' -bench ConfigDriveCreateVM -benchtime 1x -timeout 20m

bench-stemcell: test-deps ## docs/development/performance.md's stemcell table: publish a 1 GiB image by upload and by WebDAV; peak RSS and throughput beside curl's
	$(GO) test ./spec -run '^$$' -bench StemcellPublish -benchtime 1x -timeout 30m

bench-upload-monitor: test-deps ## create_stemcell by upload and WebDAV beside upload.monitoring.interval (1 s, 10 s, CloudStack's default 60 s)
	$(GO) test ./spec -run '^$$' -bench StemcellUploadMonitor -benchtime 1x -timeout 20m

bench-vhd: test-deps ## docs/development/performance.md's VHD conversion table: raw and QCOW2 (qemu-img made, compressed or not) disks of growing size to a dynamic VHD, bytes allocated and the peak heap
	$(GO) test ./stemcell/diskimage -run '^$$' -bench . -benchtime 1x -timeout 10m

bench-registry: test-deps ## GET/s and durable PUT/s of `serve`'s registry, run as a second process, over loopback
	$(GO) test ./spec -run '^$$' -bench Registry -benchtime 1x -timeout 10m

CRASH_KILLS ?= 200

test-crash: test-deps ## the crash (kill -9) and lost-answer suite with its CI figures (20 kills per method), summary tables included
	$(GO) test ./spec -count=1 -v -run 'TestCrashKill9LeavesNothing|TestLostAnswerAtEveryCallLeavesNothing' -timeout 15m

test-crash-long: test-deps ## the crash test's long mode: CRASH_KILLS (200) kills per method, CRASH_SEED to replay a run
	CRASH_KILLS=$(CRASH_KILLS) $(GO) test ./spec -count=1 -v -run 'TestCrashKill9LeavesNothing' -timeout 90m

generate: ## regenerate simulator/schema's API schemas and response fields of each release from cloudstack-go's listApis.json, and cloudstack/cloudstackmock's mocks with tools/mockgen
	$(GO) generate ./simulator/schema ./cloudstack/cloudstackmock

agentsettings: ## bin/agentsettings: the real bosh-agent's settings code, from the tools module
	cd tools && $(GO) build -o ../$(BIN)/agentsettings ./agentsettings

clean:
	rm -rf $(BIN)

# The simulated environment of hack/e2e (in a network namespace it makes as
# root, else on host loopback; E2E_NETNS=on|off|auto, see hack/e2e/env.sh)
# and the e2e suite (build tag e2e) that runs against it.
.PHONY: e2e-up test-e2e e2e-down e2e-kvm test-e2e-kvm e2e-xen-openstack test-e2e-xen-openstack e2e-vmware test-e2e-vmware e2e-vpc test-e2e-vpc

e2e-up: e2e-deps ## the simulator with an API-deployed zone, the release, a stemcell, the agent launcher and bosh create-env, in a private network namespace (E2E_NETNS=off: on host loopback)
	./hack/e2e/up.sh

test-e2e: ## the e2e suite against the environment of e2e-up: create-env, VM and disk updates, the director's bin/cpi, delete-env
	./hack/e2e/test.sh

e2e-kvm: e2e-deps ## the KVM phase's environment: as e2e-up, but KVM hosts and a stemcell shaped as bosh.io's OpenStack KVM stemcell, and no create-env (make e2e-down first if another is up; E2E_CLOUDSTACK_VERSION=4.20: the simulator is CloudStack 4.20)
	E2E_HYPERVISOR=KVM ./hack/e2e/up.sh

test-e2e-kvm: ## the KVM phase against the environment of e2e-kvm: create-env from the OpenStack stemcell (config drive ISO, virtio disk hint), delete-env
	E2E_HYPERVISOR=KVM ./hack/e2e/test.sh

e2e-xen-openstack: e2e-deps ## the XenServer/OpenStack phase's environment: as e2e-kvm, but XenServer hosts (the same OpenStack-shaped stemcell, converted to VHD by the CPI)
	E2E_HYPERVISOR=XenServer E2E_STEMCELL_KIND=openstack ./hack/e2e/up.sh

test-e2e-xen-openstack: ## the XenServer/OpenStack phase against the environment of e2e-xen-openstack: create-env (VHD template, config drive ISO, path disk hint), delete-env
	E2E_HYPERVISOR=XenServer E2E_STEMCELL_KIND=openstack ./hack/e2e/test.sh

e2e-vmware: e2e-deps ## the VMware phase's environment: as e2e-kvm, but VMware hosts and a stemcell shaped as bosh.io's vSphere stemcell
	E2E_HYPERVISOR=VMware E2E_STEMCELL_KIND=vsphere ./hack/e2e/up.sh

test-e2e-vmware: ## the VMware phase against the environment of e2e-vmware: create-env (OVA template, env CD-ROM ISO, UEFI, SCSI unit disk hint), delete-env
	E2E_HYPERVISOR=VMware E2E_STEMCELL_KIND=vsphere ./hack/e2e/test.sh

e2e-vpc: ## the VPC phase's environment: switch the one e2e-up made to a VPC tier (a VPC, a custom network ACL list, a tier on the guest network's subnet; in the CloudStack project E2E_VPC_PROJECT names, if any)
	./hack/e2e/50-vpc.sh

test-e2e-vpc: ## the VPC phase against the environment of e2e-vpc: create-env on the tier, delete-env, nothing left
	E2E_PHASE=vpc ./hack/e2e/test.sh

e2e-down: ## stop everything e2e-up started, remove its network namespace and hack/e2e/_out/
	./hack/e2e/down.sh
