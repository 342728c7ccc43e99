package web

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// secret fetches the signing key once and keeps it.
type secret struct {
	get func(context.Context) ([]byte, error)
	mu  sync.Mutex
	key []byte
}

func (s *secret) value(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	key, err := s.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("signing secret: %w", err)
	}
	if len(key) < 16 {
		return nil, errors.New("signing secret: shorter than 16 bytes")
	}
	s.key = key
	return key, nil
}
