// Package layering holds the test that keeps docs/development/architecture.md's
// import rules true: every package of the module has a row saying which of
// the module's packages it may import, and a package importing another is a
// failure naming the rule it breaks. It has no code of its own.
package layering
