package configdrive

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Epoch is the modification and access time of every file and directory
// on the image, so that two images of the same input differ only where
// go-diskfs v1.6.0 takes the clock itself: the volume descriptor's four
// dates (time.Now() in Finalize, which blkid also shows as the
// filesystem's UUID) and each entry's Rock Ridge attribute-change time
// (the staged file's ctime, which no call can set).
var Epoch = time.Unix(0, 0).UTC()

// Modes on the image: the agent reads it as root, nobody else needs to.
// Directories keep their owner's write bit, without which the staging
// area could not be removed.
const (
	dirMode  os.FileMode = 0o700
	fileMode os.FileMode = 0o400
)

// writeISO stages files in workspace, where go-diskfs' iso9660 builds an
// image, and finalizes them into isoPath with Rock Ridge names and label as
// the volume identifier. It returns the image's size.
func writeISO(isoPath, workspace, label string, files map[string][]byte) (int64, error) {
	if err := os.Mkdir(workspace, 0o700); err != nil {
		return 0, fmt.Errorf("creating the config drive's staging directory: %w", err)
	}
	f, err := os.OpenFile(isoPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("creating the config drive image: %w", err)
	}
	defer f.Close()
	iso, err := iso9660.Create(file.New(f, false), 0, 0, 0, workspace)
	if err != nil {
		return 0, fmt.Errorf("creating the ISO 9660 filesystem: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := stage(iso, name, files[name]); err != nil {
			return 0, err
		}
	}
	if err := settle(workspace); err != nil {
		return 0, err
	}
	if err := iso.Finalize(iso9660.FinalizeOptions{RockRidge: true, VolumeIdentifier: label}); err != nil {
		return 0, fmt.Errorf("finalizing the ISO 9660 filesystem: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("reading the config drive image's size: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("closing the config drive image: %w", err)
	}
	return st.Size(), nil
}

// stage writes one file, and the directories above it, into the image's
// staging area through the library.
func stage(iso *iso9660.FileSystem, name string, data []byte) error {
	if dir := path.Dir(name); dir != "." {
		if err := iso.Mkdir("/" + dir); err != nil {
			return fmt.Errorf("staging %s: %w", dir, err)
		}
	}
	w, err := iso.OpenFile("/"+name, os.O_CREATE|os.O_RDWR|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("staging %s: %w", name, err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close() // the write's error is the one to report
		return fmt.Errorf("staging %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("staging %s: %w", name, err)
	}
	return nil
}

// settle gives every staged entry its mode and the fixed Epoch, which
// Finalize copies into the directory records and Rock Ridge entries.
// Children go before their parents, whose times a change inside would
// move.
func settle(workspace string) error {
	var entries []string
	err := filepath.WalkDir(workspace, func(p string, _ fs.DirEntry, err error) error {
		entries = append(entries, p)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading the config drive's staging directory: %w", err)
	}
	for _, p := range slices.Backward(entries) {
		if err := settleOne(p); err != nil {
			return fmt.Errorf("preparing the config drive's staging directory: %w", err)
		}
	}
	return nil
}

func settleOne(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	mode := fileMode
	if st.IsDir() {
		mode = dirMode
	}
	if err := os.Chmod(p, mode); err != nil {
		return err
	}
	return os.Chtimes(p, Epoch, Epoch)
}
