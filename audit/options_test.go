package audit

import "testing"

// audit.max_bytes and audit.keep left unset reach Open as zero and take
// 64 MiB and 5 files (docs/reference.md); set, they are kept.
func TestOptionsRotationDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want Options }{
		{want: Options{MaxBytes: 64 << 20, Keep: 5}},
		{in: Options{MaxBytes: 8 << 20, Keep: 3}, want: Options{MaxBytes: 8 << 20, Keep: 3}},
	} {
		o := tc.in
		o.defaults()
		if o.MaxBytes != tc.want.MaxBytes || o.Keep != tc.want.Keep {
			t.Errorf("MaxBytes %d, Keep %d: got %d and %d, want %d and %d", tc.in.MaxBytes, tc.in.Keep, o.MaxBytes, o.Keep, tc.want.MaxBytes, tc.want.Keep)
		}
	}
}
