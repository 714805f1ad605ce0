package kernel

import (
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// DefaultPageSize is default.page.size (BaseListCmd.configure reads it):
// every list is capped at this many rows, even without paging parameters,
// and larger page sizes are refused.
const DefaultPageSize = 500

// pageSizeUnlimited is the pagesize value that lifts the cap.
const pageSizeUnlimited = -1

// Lister describes how one list command filters and renders its entities.
// Filters shared by most list commands live here; a family passes its own
// extra conditions to run.
type Lister[T any] struct {
	Key      string           // entity key in the answer, e.g. "zone"
	ID       func(T) string   // "id" and "ids" filters
	Name     func(T) string   // "name" filter; nil when the command has none
	NameLike bool             // name is a substring match (SQL LIKE %name%) rather than equality
	Keyword  func(T) []string // fields "keyword" is matched against; nil means name
	Zone     func(T) string   // "zoneid" filter; nil when the command has none
	// Owner is the account owning a row ("" for none), for the commands whose
	// Java builds its search with AccountManagerImpl.buildACLSearchParameters: projectid then
	// scopes the list (ProjectScope). nil when the command has no owner.
	Owner func(T) string
	// OwnerByIDToo is set when the Java hands buildACLSearchParameters no id
	// (SshKeyPairServiceImpl.listSshKeyPairs), so an id does not lift
	// SkipProjectResources.
	OwnerByIDToo bool
	View         func(*Call, T) map[string]any
}

// Run filters rows, counts the matches, pages them and renders the page: the
// searchAndCount(sc, Filter(startIndex, pageSizeVal)) of every list command
// (e.g. SshKeyPairServiceImpl.listSshKeyPairs). MySQL's default collation
// makes CloudStack's name comparisons case-insensitive, so they are here too.
// Rows come in creation order; a family whose Java sorts otherwise sorts first.
func (l Lister[T]) Run(c *Call, rows []T, keep ...func(T) bool) (any, error) {
	if l.Owner != nil {
		rowID := c.Params.Get("id")
		if l.OwnerByIDToo {
			rowID = ""
		}
		scope, err := c.projectScope(rowID)
		if err != nil {
			return nil, err
		}
		keep = append(keep, func(r T) bool { return scope.Admits(c.State, l.Owner(r)) })
	}
	var hits []T
	for _, r := range rows {
		if l.matches(c.Params, r) && all(r, keep) {
			hits = append(hits, r)
		}
	}
	start, end := PageBounds(c.Params, len(hits))
	views := make([]map[string]any, 0, end-start)
	for _, r := range hits[start:end] {
		views = append(views, l.View(c, r))
	}
	return ListBody(l.Key, len(hits), views), nil
}

// PlainView is a view that needs nothing of the call, as a lister's view.
func PlainView[T any](view func(T) map[string]any) func(*Call, T) map[string]any {
	return func(_ *Call, r T) map[string]any { return view(r) }
}

func all[T any](r T, keep []func(T) bool) bool {
	for _, k := range keep {
		if !k(r) {
			return false
		}
	}
	return true
}

func (l Lister[T]) matches(p Params, r T) bool {
	if id := p.Get("id"); id != "" && !strings.EqualFold(l.ID(r), id) {
		return false
	}
	if ids := p.List("ids"); len(ids) > 0 && !model.ContainsFold(ids, l.ID(r)) {
		return false
	}
	if name := p.Get("name"); name != "" && l.Name != nil && !l.nameMatches(l.Name(r), name) {
		return false
	}
	if kw := p.Get("keyword"); kw != "" && !l.keywordMatches(r, kw) {
		return false
	}
	if z := p.Get("zoneid"); z != "" && l.Zone != nil && !strings.EqualFold(l.Zone(r), z) {
		return false
	}
	return true
}

func (l Lister[T]) nameMatches(have, want string) bool {
	if l.NameLike {
		return Like(have, want)
	}
	return strings.EqualFold(have, want)
}

func (l Lister[T]) keywordMatches(r T, kw string) bool {
	fields := []string{}
	if l.Keyword != nil {
		fields = l.Keyword(r)
	} else if l.Name != nil {
		fields = []string{l.Name(r)}
	}
	for _, f := range fields {
		if Like(f, kw) {
			return true
		}
	}
	return false
}

// Like is SQL's `col LIKE '%needle%'` under a case-insensitive collation.
func Like(have, needle string) bool {
	return strings.Contains(strings.ToLower(have), strings.ToLower(needle))
}

// PageBounds is BaseListCmd.getPageSizeVal and getStartIndex: without a page
// size default.page.size caps the result; a page below 1 is the first page. Validation
// has already rejected inconsistent combinations.
func PageBounds(p Params, total int) (start, end int) {
	size := DefaultPageSize
	if v := p.Get("pagesize"); v != "" {
		n, _ := strconv.Atoi(v)
		size = n
		if n == pageSizeUnlimited {
			size = total
		}
	}
	if page := p.Int("page", 0); page > 0 {
		start = size * int(page-1)
	}
	start = min(max(start, 0), total)
	end = min(start+max(size, 0), total)
	return start, end
}

// ListBody is ListResponse as ApiResponseSerializer.toJSONSerializedString
// writes it: "{}" when nothing matched, only the count when the page is past
// the end.
func ListBody(key string, count int, items []map[string]any) map[string]any {
	body := map[string]any{}
	if count == 0 {
		return body
	}
	body["count"] = count
	if len(items) > 0 {
		body[key] = items
	}
	return body
}

// validatePaging is BaseListCmd.validateSpecificParameters (9999: a bare
// ServerApiException) then BaseListCmd.getPageSize (4350: its
// InvalidParameterValueException reaches ApiServer.handleRequest, which keeps
// the cause's code). A negative page is not refused: getStartIndex reads it
// as the first page.
func validatePaging(p Params) *APIError {
	_, hasPage := p.Values["page"]
	sizeText, hasSize := p.Values["pagesize"]
	size, _ := strconv.Atoi(strings.TrimSpace(sizeText))
	switch {
	case hasSize && !hasPage && size != pageSizeUnlimited:
		return ServerParamError(`"page" parameter is required when "pagesize" is specified`)
	case hasPage && !hasSize:
		return ServerParamError(`"pagesize" parameter is required when "page" is specified`)
	case hasSize && size > DefaultPageSize:
		return ParamError("Page size can't exceed max allowed page size value: %d", DefaultPageSize)
	case hasSize && size == pageSizeUnlimited && hasPage:
		return ParamError("Can't specify page parameter when pagesize is -1 (Unlimited)")
	}
	return nil
}

// OptEq is an optional equality filter: an empty want matches everything.
func OptEq(want, have string) bool {
	return want == "" || strings.EqualFold(want, have)
}
