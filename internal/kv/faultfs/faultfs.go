package faultfs

import (
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/vfs"
)

// Op names a kind of filesystem operation.
type Op string

// The operations a Rule sees.
const (
	OpCreate   Op = "create"   // Create, and ReuseForWrite (a recycled write-ahead log)
	OpWrite    Op = "write"    // File.Write and File.WriteAt
	OpSync     Op = "sync"     // File.Sync, File.SyncData and File.SyncTo
	OpRename   Op = "rename"   // Rename
	OpLink     Op = "link"     // Link
	OpRemove   Op = "remove"   // Remove and RemoveAll
	OpMkdir    Op = "mkdir"    // MkdirAll
	OpPrealloc Op = "prealloc" // File.Preallocate
)

// Rule decides the fate of one operation on path: nil lets it through.
type Rule func(op Op, path string) error

// FS is a vfs.FS whose operations pass through a Rule. The zero value is
// not usable; make one with New.
type FS struct {
	vfs.FS
	rule atomic.Pointer[Rule]
	free atomic.Int64 // < 0: report the real free space
}

var _ vfs.FS = (*FS)(nil)

// New wraps fs; until SetRule is called every operation passes.
func New(fs vfs.FS) *FS {
	f := &FS{FS: fs}
	f.free.Store(-1)
	return f
}

// NewOS wraps the operating system's filesystem, the one a store opened
// without Options.FS uses.
func NewOS() *FS { return New(vfs.Default) }

// SetRule replaces the rule (nil: let everything through).
func (fs *FS) SetRule(r Rule) {
	if r == nil {
		fs.rule.Store(nil)
		return
	}
	fs.rule.Store(&r)
}

// SetFree makes GetDiskUsage report n bytes available (and free); a
// negative n reports the real values again.
func (fs *FS) SetFree(n int64) { fs.free.Store(n) }

func (fs *FS) check(op Op, path string) error {
	r := fs.rule.Load()
	if r == nil {
		return nil
	}
	return (*r)(op, path)
}

// Create implements vfs.FS.
func (fs *FS) Create(name string) (vfs.File, error) {
	if err := fs.check(OpCreate, name); err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// ReuseForWrite implements vfs.FS.
func (fs *FS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	if err := fs.check(OpCreate, newname); err != nil {
		return nil, &os.PathError{Op: "reuse", Path: newname, Err: err}
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: newname}, nil
}

// OpenReadWrite implements vfs.FS.
func (fs *FS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, opts...)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// OpenDir implements vfs.FS; directory syncs pass through the rule.
func (fs *FS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, path: name}, nil
}

// Rename implements vfs.FS.
func (fs *FS) Rename(oldname, newname string) error {
	if err := fs.check(OpRename, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return fs.FS.Rename(oldname, newname)
}

// Link implements vfs.FS.
func (fs *FS) Link(oldname, newname string) error {
	if err := fs.check(OpLink, newname); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return fs.FS.Link(oldname, newname)
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	if err := fs.check(OpRemove, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return fs.FS.Remove(name)
}

// RemoveAll implements vfs.FS.
func (fs *FS) RemoveAll(name string) error {
	if err := fs.check(OpRemove, name); err != nil {
		return &os.PathError{Op: "removeall", Path: name, Err: err}
	}
	return fs.FS.RemoveAll(name)
}

// MkdirAll implements vfs.FS.
func (fs *FS) MkdirAll(dir string, perm os.FileMode) error {
	if err := fs.check(OpMkdir, dir); err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return fs.FS.MkdirAll(dir, perm)
}

// Lock implements vfs.FS (never fails by rule).
func (fs *FS) Lock(name string) (io.Closer, error) { return fs.FS.Lock(name) }

// GetDiskUsage implements vfs.FS, reporting the free space set with
// SetFree when there is one.
func (fs *FS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := fs.FS.GetDiskUsage(path)
	if n := fs.free.Load(); n >= 0 {
		if err != nil {
			u = vfs.DiskUsage{TotalBytes: math.MaxInt64}
			err = nil
		}
		u.AvailBytes, u.UsedBytes = uint64(n), u.TotalBytes-uint64(n)
	}
	return u, err
}

// file is a vfs.File whose writes and syncs pass through the rule.
type file struct {
	vfs.File
	fs   *FS
	path string
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.path); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.path, Err: err}
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpWrite, f.path); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.path, Err: err}
	}
	return f.File.WriteAt(p, off)
}

func (f *file) Sync() error {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return &os.PathError{Op: "sync", Path: f.path, Err: err}
	}
	return f.File.Sync()
}

func (f *file) SyncData() error {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return &os.PathError{Op: "sync", Path: f.path, Err: err}
	}
	return f.File.SyncData()
}

func (f *file) SyncTo(length int64) (bool, error) {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return false, &os.PathError{Op: "sync", Path: f.path, Err: err}
	}
	return f.File.SyncTo(length)
}

func (f *file) Preallocate(off, n int64) error {
	if err := f.fs.check(OpPrealloc, f.path); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

// Fail returns a Rule that fails op on every path ending in suffix ("" for
// all) with err, and lets everything else through.
func Fail(op Op, suffix string, err error) Rule {
	return func(o Op, path string) error {
		if o == op && strings.HasSuffix(path, suffix) {
			return err
		}
		return nil
	}
}
