//go:build tools

// Package mockgen pins go.uber.org/mock's mockgen, which `make generate`
// runs to write the CloudStack layer's mocks; a module of its own so its
// dependencies never move the versions the CPI or bosh-cli build with.
package mockgen

import _ "go.uber.org/mock/mockgen"
