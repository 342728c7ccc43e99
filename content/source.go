package content

import "io/fs"

// Fixed is a course loaded once; it never changes.
type Fixed struct{ C *Course }

// Course returns the loaded course.
func (f Fixed) Course() (*Course, error) { return f.C, nil }

// Reloader loads the course again from its file system on every call, so an
// author editing a content directory sees each change on the next reload of
// the page. It is meant for authoring, not for serving learners.
type Reloader struct{ FS fs.FS }

// Course loads and validates the content as it is on disk now.
func (r Reloader) Course() (*Course, error) { return Load(r.FS) }
