package cloudstack

import (
	"fmt"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// IsID says ref is a CloudStack UUID rather than a name.
func IsID(ref string) bool { return csgo.IsID(ref) }

// exactlyOne picks from a listing the one item that ref (a UUID or a name)
// names exactly. CloudStack's name filters are substring matches, or absent,
// and most names need not be unique, so the listing may hold near misses
// and namesakes: a near miss is skipped, and two exact matches are refused
// rather than guessed between. None is (nil, nil). what names the kind
// (and scope) for the error, e.g. "networks in zone z1".
func exactlyOne[T any](items []T, ref string, idName func(T) (id, name string), what string) (*T, error) {
	var hits []T
	for _, item := range items {
		if id, name := idName(item); ref != "" && (id == ref || name == ref) {
			hits = append(hits, item)
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
		return &hits[0], nil
	}
	return nil, fmt.Errorf("%d CloudStack %s are named %q; refusing to guess which one is meant: name it by id",
		len(hits), what, ref)
}

// namedExactly keeps the items named exactly name: CloudStack's name
// filters match substrings.
func namedExactly[T any](items []T, name string, nameOf func(T) string) []T {
	var named []T
	for _, item := range items {
		if nameOf(item) == name {
			named = append(named, item)
		}
	}
	return named
}

// byIDOrName are the list parameters findByIDOrName sets.
type byIDOrName interface {
	SetProjectid(string)
	SetListall(bool)
	SetId(string)
	SetName(string)
}

// findByIDOrName lists in the project by id when ref is a UUID, else by
// name (a substring filter in CloudStack: exactlyOne compares exactly), for
// the name-style CIDs of earlier CPIs. list passes its errors through
// c.fail; one CloudStack answers "no such entity" is absent, (nil, nil).
func findByIDOrName[P byIDOrName, T any](c *Client, p P, ref string, list func(P) ([]T, error),
	idName func(T) (id, name string), what string) (*T, error) {
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetListall(true)
	if IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetName(ref)
	}
	rows, err := list(p)
	if IsNoSuchEntity(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return exactlyOne(rows, ref, idName, what)
}
