package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/locklab/locklab/store"
)

// upgradeTimeout bounds the renaming of what an earlier version stored:
// it walks the keys once, at start, beside the requests.
const upgradeTimeout = 5 * time.Minute

// upgradeStore renames what an earlier version of Lock Lab stored under
// other names (store.Upgrade), and logs what it did. It runs beside the
// requests, so a large Redis does not hold up the start.
func upgradeStore(ctx context.Context, st *store.Store, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, upgradeTimeout)
	defer cancel()
	n, err := st.Upgrade(ctx)
	switch {
	case err != nil:
		logger.Warn("renaming data stored by an earlier version stopped; the next start tries again", "renamed", n, "error", err)
	case n > 0:
		logger.Info("renamed data stored by an earlier version", "keys", n)
	}
}
