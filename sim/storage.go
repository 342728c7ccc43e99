package sim

import "github.com/locklab/locklab/lock"

// Storage is the service the lock protects: the lock package's fenced
// storage, whose rule (reject a token lower than the highest seen) the
// race, the lab and the playground's @storage all share.
type Storage = lock.Storage
