package integrity

import "testing"

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in      string
		want    Policy
		wantErr bool
	}{
		{"", Warn, false},
		{"warn", Warn, false},
		{"quarantine", Quarantine, false},
		{"Quarantine", "", true},
		{"block", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePolicy(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPolicyBlocks(t *testing.T) {
	findings := []Finding{{Field: "description", Kind: KindHiddenInstruction, Detail: "x"}}
	tests := []struct {
		name     string
		policy   Policy
		findings []Finding
		approved bool
		want     bool
	}{
		{"warn never blocks", Warn, findings, false, false},
		{"quarantine blocks a flagged tool", Quarantine, findings, false, true},
		{"quarantine releases an approved tool", Quarantine, findings, true, false},
		{"quarantine passes a clean tool", Quarantine, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Blocks(tt.findings, tt.approved); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
