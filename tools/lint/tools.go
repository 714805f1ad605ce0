//go:build tools

// Package lint pins golangci-lint in a module of its own, so that its many
// dependencies can never move the versions the CPI or bosh-cli build with.
// The Makefile builds it into bin/golangci-lint for `make lint`.
package lint

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
