package simulator

import (
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// defaultPageSize is default.page.size (BaseListCmd.configure reads it):
// every list is capped at this many rows, even without paging parameters,
// and larger page sizes are refused.
const defaultPageSize = 500

// pageSizeUnlimited is the pagesize value that lifts the cap.
const pageSizeUnlimited = -1

// lister describes how one list command filters and renders its entities.
// Filters shared by most list commands live here; a family passes its own
// extra conditions to run.
type lister[T any] struct {
	key      string           // entity key in the answer, e.g. "zone"
	id       func(T) string   // "id" and "ids" filters
	name     func(T) string   // "name" filter; nil when the command has none
	nameLike bool             // name is a substring match (SQL LIKE %name%) rather than equality
	keyword  func(T) []string // fields "keyword" is matched against; nil means name
	zone     func(T) string   // "zoneid" filter; nil when the command has none
	view     func(*Call, T) map[string]any
}

// run filters rows, counts the matches, pages them and renders the page: the
// searchAndCount(sc, Filter(startIndex, pageSizeVal)) of every list command
// (e.g. SshKeyPairServiceImpl.listSshKeyPairs). MySQL's default collation
// makes CloudStack's name comparisons case-insensitive, so they are here too.
// Rows come in creation order; a family whose Java sorts otherwise sorts first.
func (l lister[T]) run(c *Call, rows []T, keep ...func(T) bool) (any, error) {
	var hits []T
	for _, r := range rows {
		if l.matches(c.Params, r) && all(r, keep) {
			hits = append(hits, r)
		}
	}
	start, end := pageBounds(c.Params, len(hits))
	views := make([]map[string]any, 0, end-start)
	for _, r := range hits[start:end] {
		views = append(views, l.view(c, r))
	}
	return listBody(l.key, len(hits), views), nil
}

// plainView is a view that needs nothing of the call, as a lister's view.
func plainView[T any](view func(T) map[string]any) func(*Call, T) map[string]any {
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

func (l lister[T]) matches(p Params, r T) bool {
	if id := p.Get("id"); id != "" && !strings.EqualFold(l.id(r), id) {
		return false
	}
	if ids := p.List("ids"); len(ids) > 0 && !model.ContainsFold(ids, l.id(r)) {
		return false
	}
	if name := p.Get("name"); name != "" && l.name != nil && !l.nameMatches(l.name(r), name) {
		return false
	}
	if kw := p.Get("keyword"); kw != "" && !l.keywordMatches(r, kw) {
		return false
	}
	if z := p.Get("zoneid"); z != "" && l.zone != nil && !strings.EqualFold(l.zone(r), z) {
		return false
	}
	return true
}

func (l lister[T]) nameMatches(have, want string) bool {
	if l.nameLike {
		return like(have, want)
	}
	return strings.EqualFold(have, want)
}

func (l lister[T]) keywordMatches(r T, kw string) bool {
	fields := []string{}
	if l.keyword != nil {
		fields = l.keyword(r)
	} else if l.name != nil {
		fields = []string{l.name(r)}
	}
	for _, f := range fields {
		if like(f, kw) {
			return true
		}
	}
	return false
}

// like is SQL's `col LIKE '%needle%'` under a case-insensitive collation.
func like(have, needle string) bool {
	return strings.Contains(strings.ToLower(have), strings.ToLower(needle))
}

// pageBounds is BaseListCmd.getPageSizeVal and getStartIndex: without a page
// size default.page.size caps the result; a page below 1 is the first page. Validation
// has already rejected inconsistent combinations.
func pageBounds(p Params, total int) (start, end int) {
	size := defaultPageSize
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

// listBody is ListResponse as ApiResponseSerializer.toJSONSerializedString
// writes it: "{}" when nothing matched, only the count when the page is past
// the end.
func listBody(key string, count int, items []map[string]any) map[string]any {
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
	_, hasPage := p.values["page"]
	sizeText, hasSize := p.values["pagesize"]
	size, _ := strconv.Atoi(strings.TrimSpace(sizeText))
	switch {
	case hasSize && !hasPage && size != pageSizeUnlimited:
		return serverParamError(`"page" parameter is required when "pagesize" is specified`)
	case hasPage && !hasSize:
		return serverParamError(`"pagesize" parameter is required when "page" is specified`)
	case hasSize && size > defaultPageSize:
		return paramError("Page size can't exceed max allowed page size value: %d", defaultPageSize)
	case hasSize && size == pageSizeUnlimited && hasPage:
		return paramError("Can't specify page parameter when pagesize is -1 (Unlimited)")
	}
	return nil
}

// optEq is an optional equality filter: an empty want matches everything.
func optEq(want, have string) bool {
	return want == "" || strings.EqualFold(want, have)
}
