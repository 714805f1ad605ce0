// Package wf is an empty stand-in for inet.af/wf, the Windows Filtering
// Platform bindings that bosh-agent imports only in Windows builds. The Go
// module proxy refuses to serve inet.af/wf, so the tools module replaces it
// with this module to let module resolution (go mod tidy) succeed. Nothing
// built for Linux imports it.
package wf
