package integrity

import (
	"slices"
	"testing"
)

func TestToolNamesMentions(t *testing.T) {
	names := NewToolNames(others)
	tests := []struct {
		name string
		desc string
		own  []string
		want []string
	}{
		{"one name", "Then call send_email.", nil, []string{"send_email"}},
		{"each once, as written, in order", "Use `Send_Email`, then list_inbox, then send_email again.", nil,
			[]string{"Send_Email", "list_inbox"}},
		{"after an own name", "Like read_file, but then call send_email.", []string{"read_file"}, []string{"send_email"}},
		{"own names skipped", "Call send_email.", []string{"mail_send_email", "send_email"}, nil},
		{"plain words ignored", "Search the web and fetch results.", nil, nil},
		{"no whole name", "Unlike send_email_v2, it resends.", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names.MentionsIn(ContractOf(rawTool("x_tool", tt.desc, `{"type":"object"}`)).Identifiers, tt.own...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestToolNamesMentionsInSchemaProse(t *testing.T) {
	tool := rawTool("x_tool", "Plain.", `{"type":"object","properties":{"send_email":{"type":"string",`+
		`"description":"Before this, call create_issue."}},"required":["send_email"]}`)
	if got := NewToolNames(others).MentionsIn(ContractOf(tool).Identifiers); !slices.Equal(got, []string{"create_issue"}) {
		t.Errorf("got %q, want the description's create_issue only (a parameter name is not a mention)", got)
	}
	if got := NewToolNames(nil).MentionsIn(ContractOf(tool).Identifiers); got != nil {
		t.Errorf("no names: got %q", got)
	}
}
