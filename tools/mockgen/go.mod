module github.com/bosh-cloudstack/cloudstack-cpi/tools/mockgen

go 1.26.0

require go.uber.org/mock v0.5.0

// mockgen v0.5.0 asks for golang.org/x/tools v0.22.0, which no longer
// compiles with Go 1.26 (internal/tokeninternal); v0.45.0 does.
require (
	golang.org/x/mod v0.36.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/tools v0.45.0 // indirect
)
