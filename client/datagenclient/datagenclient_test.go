package datagenclient

import (
	"strings"
	"testing"
)

type fake struct{ Datasets }

// TestGet: without a registration Get says DATAGEN is not built in;
// after one (the control) it returns what was registered.
func TestGet(t *testing.T) {
	if _, err := Get(); err == nil || !strings.Contains(err.Error(), "DATAGEN is not built into this program") {
		t.Fatalf("Get before Register: %v", err)
	}
	Register(fake{})
	defer Register(nil)
	if d, err := Get(); err != nil || d != (fake{}) {
		t.Fatalf("Get after Register: %v %v", d, err)
	}
}
