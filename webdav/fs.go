package webdav

import (
	"context"
	"os"
	"path"

	xwebdav "golang.org/x/net/webdav"
)

// readOnlyFS exposes the catalog's files and nothing else: no directory is
// listable (the tokens are the only protection), nothing is writable.
type readOnlyFS struct{ files *catalog }

func (fs readOnlyFS) Mkdir(context.Context, string, os.FileMode) error { return os.ErrPermission }
func (fs readOnlyFS) RemoveAll(context.Context, string) error          { return os.ErrPermission }
func (fs readOnlyFS) Rename(context.Context, string, string) error     { return os.ErrPermission }

func (fs readOnlyFS) OpenFile(_ context.Context, name string, flag int, _ os.FileMode) (xwebdav.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, os.ErrPermission
	}
	local, ok := fs.files.lookup(path.Clean(name))
	if !ok {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(local)
	if err != nil {
		return nil, err
	}
	return readOnlyFile{f}, nil
}

func (fs readOnlyFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	local, ok := fs.files.lookup(path.Clean(name))
	if !ok {
		return nil, os.ErrNotExist
	}
	return os.Stat(local)
}

type readOnlyFile struct{ *os.File }

func (readOnlyFile) Write([]byte) (int, error) { return 0, os.ErrPermission }
