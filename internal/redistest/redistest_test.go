package redistest

import "testing"

func TestStart(t *testing.T) {
	addr := Start(t)
	if err := ping(addr); err != nil {
		t.Fatalf("ping(%q) = %v; want nil", addr, err)
	}
}
