package redistest

import "testing"

func TestStart(t *testing.T) {
	addr := Start(t)
	if err := Ping(addr); err != nil {
		t.Fatalf("Ping(%q) = %v; want nil", addr, err)
	}
}
